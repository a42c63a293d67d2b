/* SPDX-License-Identifier: GPL-2.0 */
/* The JSON report's causes (report_causes.c), for report_json.c. */
#ifndef IG_ENGINE_REPORT_CAUSES_H
#define IG_ENGINE_REPORT_CAUSES_H

#include "engine/jsonval.h"
#include "engine/model.h"

/* "causes" / "unresolved_causes": @s's causes, the largest first, with
 * their shares, details and stacks. */
jo *ig_report_causes_json(const struct ig_engine *e, const struct ig_causeset *s);
/* "events.stack_tables": what the stack tables hold and evicted. */
jo *ig_report_stack_tables_json(const struct ig_engine *e);

#endif
