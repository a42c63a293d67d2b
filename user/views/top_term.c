// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "views/top_term.h"

#define ENTER_SCREEN "\033[?1049h\033[?25l\033[H\033[2J"
#define LEAVE_SCREEN "\033[?25h\033[?1049l"

/* Shared with the signal handlers, which use only async-signal-safe calls. */
static struct termios saved;
static int term_fd = -1;
static volatile sig_atomic_t raw_on, events;
static const int fatal_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void put(const char *s)
{
	size_t n = strlen(s);
	ssize_t w;

	while (n && ((w = write(term_fd, s, n)) > 0 || (w < 0 && errno == EINTR)))
		if (w > 0) {
			s += w;
			n -= w;
		}
}

static void restore(void)
{
	int e = errno;

	if (raw_on) {
		put(LEAVE_SCREEN);
		tcsetattr(term_fd, TCSADRAIN, &saved);
		raw_on = 0;
	}
	errno = e;
}

static int make_raw(void)
{
	struct termios t = saved;

	/* ISIG stays: Ctrl-C and Ctrl-Z reach the handlers below */
	t.c_lflag &= ~(ICANON | ECHO | IEXTEN);
	t.c_iflag &= ~(IXON | ICRNL);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(term_fd, TCSADRAIN, &t))
		return -errno;
	raw_on = 1;
	put(ENTER_SCREEN);
	return 0;
}

static void on_fatal(int sig)
{
	restore();
	/* SA_RESETHAND made the action default; it is delivered on return */
	raise(sig);
}

static void on_tstp(int sig)
{
	sigset_t set;

	(void)sig;
	restore();
	signal(SIGTSTP, SIG_DFL);
	raise(SIGTSTP);
	sigemptyset(&set);
	sigaddset(&set, SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &set, NULL);	/* stops here until SIGCONT */
	signal(SIGTSTP, on_tstp);
	if (term_fd >= 0 && tcgetattr(term_fd, &saved) == 0)
		make_raw();
	events |= IG_TERM_RESUMED;
}

static void on_flag(int sig)
{
	events |= sig == SIGWINCH ? IG_TERM_RESIZED : IG_TERM_RESUMED;
}

static int handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa = { .sa_handler = fn, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) ? -errno : 0;
}

static int install(void)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]) && !err; i++)
		err = handle(fatal_sigs[i], on_fatal, SA_RESETHAND);
	/* no SA_RESTART: poll() returns EINTR and the view redraws */
	if (!err)
		err = handle(SIGTSTP, on_tstp, 0);
	if (!err)
		err = handle(SIGCONT, on_flag, 0);
	if (!err)
		err = handle(SIGWINCH, on_flag, 0);
	return err;
}

static void uninstall(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++)
		signal(fatal_sigs[i], SIG_DFL);
	signal(SIGTSTP, SIG_DFL);
	signal(SIGCONT, SIG_DFL);
	signal(SIGWINCH, SIG_DFL);
}

int ig_term_enter(int fd)
{
	static int registered;
	int err;

	if (!isatty(fd))
		return -ENOTTY;
	if (raw_on)
		return -EBUSY;
	if (tcgetattr(fd, &saved))
		return -errno;
	term_fd = fd;
	if (!registered && atexit(restore) == 0)
		registered = 1;
	err = install();
	if (!err)
		err = make_raw();
	if (err)
		ig_term_leave();
	return err;
}

void ig_term_leave(void)
{
	restore();
	uninstall();
}

bool ig_term_active(void)
{
	return raw_on;
}

int ig_term_size(int fd, int *rows, int *cols)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws))
		return -errno;
	*rows = ws.ws_row ? ws.ws_row : 24;
	*cols = ws.ws_col ? ws.ws_col : 80;
	return 0;
}

int ig_term_events(void)
{
	/* one step: a signal arriving meanwhile is not lost */
	return __atomic_exchange_n(&events, 0, __ATOMIC_SEQ_CST);
}
