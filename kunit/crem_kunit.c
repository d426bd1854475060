// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites of crem.ko (test build only). The test bodies are Rust
 * (kunit/ *.rs) so they exercise crem-core exactly as the module runs it; each
 * returns 0 or writes a reason into @msg. 6.12 has no Rust suite macro, so the
 * suites are declared here with the C API.
 */
#include <kunit/test.h>

typedef int (*crem_rs_test_fn)(char *msg, size_t len);

#define CREM_RS_TEST(name)                                                     \
	int crem_kunit_##name(char *msg, size_t len);                          \
	static void name(struct kunit *test)                                   \
	{                                                                      \
		char msg[256] = "";                                            \
		int r = crem_kunit_##name(msg, sizeof(msg));                   \
		KUNIT_EXPECT_EQ_MSG(test, r, 0, "%s", msg);                    \
	}

/*
 * Benchmarks: the body measures and writes its result line, printed here as
 * a KUnit diagnostic ("crem-bench: ..."). They fail only if the workload
 * itself misbehaves, never on time (see docs/perf.md).
 */
#define CREM_RS_BENCH(name)                                                    \
	int crem_kunit_##name(char *msg, size_t len);                          \
	static void name(struct kunit *test)                                   \
	{                                                                      \
		char msg[256] = "";                                            \
		int r = crem_kunit_##name(msg, sizeof(msg));                   \
		KUNIT_EXPECT_EQ_MSG(test, r, 0, "%s", msg);                    \
		if (!r)                                                        \
			kunit_info(test, "%s\n", msg);                         \
	}

CREM_RS_TEST(gf_tables_match_definition)
CREM_RS_TEST(gf_tables_mul_acc)
CREM_RS_TEST(coding_example_roundtrip)
CREM_RS_TEST(gf_simd_matches_scalar)
CREM_RS_TEST(workspace_decodes)
CREM_RS_TEST(workspace_one_user)

static struct kunit_case crem_gf_cases[] = {
	KUNIT_CASE(gf_tables_match_definition),
	KUNIT_CASE(gf_tables_mul_acc),
	KUNIT_CASE(coding_example_roundtrip),
	KUNIT_CASE(gf_simd_matches_scalar),
	KUNIT_CASE(workspace_decodes),
	KUNIT_CASE(workspace_one_user),
	{}
};

static struct kunit_suite crem_gf_suite = {
	.name = "crem_gf",
	.test_cases = crem_gf_cases,
};

CREM_RS_TEST(inject_restored_is_original)
CREM_RS_TEST(inject_refuses_bad_payload)
CREM_RS_TEST(inject_forward_mark)

static struct kunit_case crem_inject_cases[] = {
	KUNIT_CASE(inject_restored_is_original),
	KUNIT_CASE(inject_refuses_bad_payload),
	KUNIT_CASE(inject_forward_mark),
	{}
};

static struct kunit_suite crem_inject_suite = {
	.name = "crem_inject",
	.test_cases = crem_inject_cases,
};

CREM_RS_TEST(store_retains_and_releases)
CREM_RS_TEST(store_clones_current)
CREM_RS_TEST(store_budget_refuses)
CREM_RS_TEST(store_repairs)
CREM_RS_TEST(store_holds_and_dev_gone)

static struct kunit_case crem_store_cases[] = {
	KUNIT_CASE(store_retains_and_releases),
	KUNIT_CASE(store_clones_current),
	KUNIT_CASE(store_budget_refuses),
	KUNIT_CASE(store_repairs),
	KUNIT_CASE(store_holds_and_dev_gone),
	{}
};

static struct kunit_suite crem_store_suite = {
	.name = "crem_store",
	.test_cases = crem_store_cases,
};

CREM_RS_TEST(timer_fires_once)
CREM_RS_TEST(timer_cancel_and_drop)
CREM_RS_TEST(timer_waits_for_bh_lock)
CREM_RS_TEST(flow_timer_drives_hello)
CREM_RS_TEST(flow_kill_stops_timer)
CREM_RS_TEST(flow_reset_counters)
CREM_RS_TEST(config_peer_for)
CREM_RS_TEST(config_who)
CREM_RS_TEST(config_commits)

/* A flow's timer and lock (kernel_ext/hrtimer.rs, bh.rs), the flow (rust/flow.rs),
 * the configuration it reads (rust/config.rs). */
static struct kunit_case crem_flow_cases[] = {
	KUNIT_CASE(timer_fires_once),
	KUNIT_CASE(timer_cancel_and_drop),
	KUNIT_CASE(timer_waits_for_bh_lock),
	KUNIT_CASE(flow_timer_drives_hello),
	KUNIT_CASE(flow_kill_stops_timer),
	KUNIT_CASE(flow_reset_counters),
	KUNIT_CASE(config_peer_for),
	KUNIT_CASE(config_who),
	KUNIT_CASE(config_commits),
	{}
};

static struct kunit_suite crem_flow_suite = {
	.name = "crem_flow",
	.test_cases = crem_flow_cases,
};

CREM_RS_BENCH(gf_mul_acc_throughput)
CREM_RS_BENCH(gf_mul_acc_throughput_chosen)
CREM_RS_BENCH(roce_parse_per_packet)
CREM_RS_BENCH(csf_per_packet)
CREM_RS_BENCH(csf_per_packet_m4)
CREM_RS_BENCH(csf_per_packet_m4_chosen)
CREM_RS_BENCH(flow_csf_per_packet)
CREM_RS_BENCH(flow_csf_per_packet_m4)

static struct kunit_case crem_bench_cases[] = {
	KUNIT_CASE(gf_mul_acc_throughput),
	KUNIT_CASE(gf_mul_acc_throughput_chosen),
	KUNIT_CASE(roce_parse_per_packet),
	KUNIT_CASE(csf_per_packet),
	KUNIT_CASE(csf_per_packet_m4),
	KUNIT_CASE(csf_per_packet_m4_chosen),
	KUNIT_CASE(flow_csf_per_packet),
	KUNIT_CASE(flow_csf_per_packet_m4),
	{}
};

/* Runs last, after the functional suites. */
static struct kunit_suite crem_bench_suite = {
	.name = "crem_bench",
	.test_cases = crem_bench_cases,
};

kunit_test_suites(&crem_gf_suite, &crem_inject_suite, &crem_store_suite, &crem_flow_suite,
		  &crem_bench_suite);
