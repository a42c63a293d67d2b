// SPDX-License-Identifier: GPL-2.0
/* A program the verifier refused is named with the last lines of its log,
 * from libbpf's own report of it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "probes/log.h"

static libbpf_print_fn_t fn;

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fn(LIBBPF_WARN, fmt, ap);
	va_end(ap);
}

/* As libbpf 1.1 reports a refusal: the failure, then the log. */
static void refusal(const char *prog, const char *log)
{
	say("libbpf: prog '%s': BPF program load failed: %s\n", prog, "Permission denied");
	say("libbpf: prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n",
	    prog, log);
}

static void named_with_its_reason(void **state)
{
	struct ig_bpf_refusal r;

	(void)state;
	ig_log_catch_refusal(&r);
	say("libbpf: loading object 'idlegap_bpf' from buffer\n");
	refusal("ig_switch_btf",
		"0: R1=ctx() R10=fp0\n"
		"; bpf_probe_read_kernel_str(r->comp[n], IG_NAME_LEN, @ files.bpf.h:52\n"
		"123: (85) call bpf_probe_read_kernel_str#115\n"
		"R1 unbounded memory access, make sure to bounds check any such access\n"
		"processed 4321 insns (limit 1000000) max_states_per_insn 4 total_states 80\n");
	ig_log_catch_refusal(NULL);
	assert_string_equal(r.prog, "ig_switch_btf");
	assert_string_equal(r.reason, "123: (85) call bpf_probe_read_kernel_str#115; "
			    "R1 unbounded memory access, make sure to bounds check any such access");
}

static void nothing_refused(void **state)
{
	struct ig_bpf_refusal r;

	(void)state;
	ig_log_catch_refusal(&r);
	say("libbpf: map 'rb': created successfully, fd=%d\n", 4);
	ig_log_catch_refusal(NULL);
	assert_string_equal(r.prog, "");
	/* not caught once stopped */
	refusal("ig_sample", "invalid func unknown#165\n");
	assert_string_equal(r.prog, "");
}

static void the_last_refusal_counts(void **state)
{
	struct ig_bpf_refusal r;

	(void)state;
	ig_log_catch_refusal(&r);
	refusal("ig_cu_enter", "number of funcs in func_info doesn't match number of subprogs\n");
	ig_log_catch_refusal(NULL);
	assert_string_equal(r.prog, "ig_cu_enter");
	assert_string_equal(r.reason, "number of funcs in func_info doesn't match number of subprogs");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(named_with_its_reason),
		cmocka_unit_test(nothing_refused),
		cmocka_unit_test(the_last_refusal_counts),
	};

	ig_log_setup_libbpf();
	fn = libbpf_set_print(NULL);
	libbpf_set_print(fn);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
