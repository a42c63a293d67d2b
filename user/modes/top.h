/* SPDX-License-Identifier: GPL-2.0 */
/* `idlegap top`: a live view of every GPU process on the host (or of the
 * processes named with -p), redrawn each second. */
#ifndef IG_TOP_H
#define IG_TOP_H

#include "modes/session.h"

/* Exit status for main(): 0 after q or Ctrl-C, 1 on failure. */
int ig_top_main(struct ig_session_opts *o);

#endif
