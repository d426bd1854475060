// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites of crem.ko (test build only). The test bodies are Rust
 * (kunit/ *.rs) so they exercise crem-core exactly as the module runs it; each
 * returns 0 or writes a reason into @msg. 6.12 has no Rust suite macro, so the
 * suites are declared here with the C API.
 */
#include <kunit/test.h>
#include <linux/netfilter.h>
#include <net/net_namespace.h>
#include <net/route.h>

typedef int (*crem_case_fn)(char *msg, size_t len);

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

/* The hook benchmark's C half (kunit/bench_hook.rs): a forwarded packet's route and hook call. */
unsigned int crem_kunit_hook_forward(struct sk_buff *skb, void *priv);
bool crem_kunit_hook_route(struct sk_buff *skb);

static int crem_kunit_okfn(struct net *net, struct sock *sk, struct sk_buff *skb)
{
	consume_skb(skb); /* on its way: forwarded */
	return 0;
}

/*
 * Gives @skb a route, as a forwarded packet has one by FORWARD: the CRF
 * holds only packets with a route (the one they are released on). Here it
 * is the loopback's output route; where it takes a released packet is not
 * part of what the cases measure.
 */
bool crem_kunit_hook_route(struct sk_buff *skb)
{
	struct rtable *rt = ip_route_output(&init_net, htonl(INADDR_LOOPBACK), 0, 0, 0,
					    RT_SCOPE_UNIVERSE);

	if (IS_ERR(rt))
		return false;
	skb_dst_set(skb, &rt->dst);
	return true;
}

/* The hook of every hook point (rust/hook_points.rs). */
unsigned int crem_nf_hook(void *priv, struct sk_buff *skb, const struct nf_hook_state *state);

/* @skb (an IPv4 packet, network header at data) through the FORWARD hook,
 * whose tag (@priv) Rust passes. */
unsigned int crem_kunit_hook_forward(struct sk_buff *skb, void *priv)
{
	struct nf_hook_state state = {
		.hook = NF_INET_FORWARD,
		.pf = NFPROTO_IPV4,
		.net = &init_net,
		.okfn = crem_kunit_okfn,
	};
	unsigned int verdict;

	/* FORWARD runs in softirq (BH off) under RCU, as nf_hook_slow's caller
	 * holds it: the hook's own-packet check reads a per-CPU word. */
	local_bh_disable();
	rcu_read_lock();
	verdict = crem_nf_hook(priv, skb, &state);
	rcu_read_unlock();
	local_bh_enable();
	if (verdict == NF_ACCEPT)
		crem_kunit_okfn(&init_net, NULL, skb);
	return verdict;
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
CREM_RS_TEST(inject_restored_is_original6)
CREM_RS_TEST(inject_refuses_bad_payload)
CREM_RS_TEST(inject_forward_mark)

static struct kunit_case crem_inject_cases[] = {
	KUNIT_CASE(inject_restored_is_original),
	KUNIT_CASE(inject_restored_is_original6),
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
CREM_RS_TEST(store_counts_overwrites)
CREM_RS_TEST(store_holds_a_window)
CREM_RS_TEST(store_replays_a_kept_copy)
CREM_RS_TEST(store_acks_wait_behind_held)
CREM_RS_TEST(backlog_recognises_its_own)
CREM_RS_BENCH(store_sized_by_bdp)

static struct kunit_case crem_store_cases[] = {
	KUNIT_CASE(store_retains_and_releases),
	KUNIT_CASE(store_clones_current),
	KUNIT_CASE(store_budget_refuses),
	KUNIT_CASE(store_repairs),
	KUNIT_CASE(store_holds_and_dev_gone),
	KUNIT_CASE(store_counts_overwrites),
	KUNIT_CASE(store_holds_a_window),
	KUNIT_CASE(store_replays_a_kept_copy),
	KUNIT_CASE(store_acks_wait_behind_held),
	KUNIT_CASE(backlog_recognises_its_own),
	KUNIT_CASE(store_sized_by_bdp),
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
CREM_RS_TEST(config_v6_peers)
CREM_RS_TEST(config_commits)
CREM_RS_TEST(config_hooks_per_role)
CREM_RS_TEST(pool_fills_and_closes)
CREM_RS_TEST(flow_setup_from_request)
CREM_RS_TEST(create_queue_and_spares)
CREM_RS_TEST(create_queue_bounded)
CREM_RS_TEST(socket_binds_and_receives)
CREM_RS_TEST(socket_answers_hello_port)
CREM_RS_TEST(netns_budget)
CREM_RS_TEST(removal_once_and_totals)
CREM_RS_TEST(collector_expires_idle)

/* A flow's timer and lock (kernel_ext/hrtimer.rs, bh.rs), the flow (rust/flow.rs),
 * the configuration it reads (rust/config.rs), the spare pool (rust/pool.rs),
 * set-up from a request and creation (rust/create.rs), the CREM socket
 * (rust/socket.rs), the netns's memory budget (rust/netns.rs), removal and
 * the collector (rust/removal.rs, rust/collector.rs). */
CREM_RS_TEST(hook_dev_gone_reaps)
CREM_RS_TEST(hook_totals_keep_removed)
CREM_RS_TEST(hook_reporter_only_passes)

static struct kunit_case crem_flow_cases[] = {
	KUNIT_CASE(timer_fires_once),
	KUNIT_CASE(timer_cancel_and_drop),
	KUNIT_CASE(timer_waits_for_bh_lock),
	KUNIT_CASE(flow_timer_drives_hello),
	KUNIT_CASE(flow_kill_stops_timer),
	KUNIT_CASE(flow_reset_counters),
	KUNIT_CASE(config_peer_for),
	KUNIT_CASE(config_who),
	KUNIT_CASE(config_v6_peers),
	KUNIT_CASE(config_commits),
	KUNIT_CASE(config_hooks_per_role),
	KUNIT_CASE(pool_fills_and_closes),
	KUNIT_CASE(flow_setup_from_request),
	KUNIT_CASE(create_queue_and_spares),
	KUNIT_CASE(create_queue_bounded),
	KUNIT_CASE(socket_binds_and_receives),
	KUNIT_CASE(socket_answers_hello_port),
	KUNIT_CASE(netns_budget),
	KUNIT_CASE(removal_once_and_totals),
	KUNIT_CASE(collector_expires_idle),
	KUNIT_CASE(hook_dev_gone_reaps),
	KUNIT_CASE(hook_totals_keep_removed),
	KUNIT_CASE(hook_reporter_only_passes),
	{}
};

static struct kunit_suite crem_flow_suite = {
	.name = "crem_flow",
	.test_cases = crem_flow_cases,
};

CREM_RS_TEST(hlist_add_remove)
CREM_RS_TEST(hlist_moved_entry)
CREM_RS_TEST(hlist_readers_race)
CREM_RS_TEST(table_indexes)
CREM_RS_TEST(table_walk)
CREM_RS_TEST(table_jhash2)
CREM_RS_TEST(table_v6)
CREM_RS_TEST(addr_round_trip)

/* The flow table (rust/table.rs), its RCU hash chains (kernel_ext/rcu_hlist.rs)
 * and the addresses of its keys (rust/addr.rs). */
static struct kunit_case crem_table_cases[] = {
	KUNIT_CASE(hlist_add_remove),
	KUNIT_CASE(hlist_moved_entry),
	KUNIT_CASE(hlist_readers_race),
	KUNIT_CASE(table_indexes),
	KUNIT_CASE(table_walk),
	KUNIT_CASE(table_jhash2),
	KUNIT_CASE(table_v6),
	KUNIT_CASE(addr_round_trip),
	{}
};

static struct kunit_suite crem_table_suite = {
	.name = "crem_table",
	.test_cases = crem_table_cases,
};

CREM_RS_TEST(genl_flow_reply)
CREM_RS_TEST(genl_flow_reply_v6)
CREM_RS_TEST(genl_extack)
CREM_RS_TEST(genl_config_roundtrip)
CREM_RS_TEST(genl_config_refusals)

/* The genetlink abstraction and the flow's attributes (rust/kernel_ext/genl.rs, rust/netlink/). */
static struct kunit_case crem_genl_cases[] = {
	KUNIT_CASE(genl_flow_reply),
	KUNIT_CASE(genl_flow_reply_v6),
	KUNIT_CASE(genl_extack),
	KUNIT_CASE(genl_config_roundtrip),
	KUNIT_CASE(genl_config_refusals),
	{}
};

static struct kunit_suite crem_genl_suite = {
	.name = "crem_genl",
	.test_cases = crem_genl_cases,
};

CREM_RS_BENCH(gf_mul_acc_throughput)
CREM_RS_BENCH(gf_mul_acc_throughput_chosen)
CREM_RS_BENCH(roce_parse_per_packet)
CREM_RS_BENCH(csf_per_packet)
CREM_RS_BENCH(csf_per_packet_m4)
CREM_RS_BENCH(csf_per_packet_m4_chosen)
CREM_RS_BENCH(flow_csf_per_packet)
CREM_RS_BENCH(flow_csf_per_packet_m4)
CREM_RS_BENCH(hook_not_roce)
CREM_RS_BENCH(hook_unprotected)
CREM_RS_BENCH(hook_csf_per_packet)
CREM_RS_BENCH(hook_csf_per_packet_m4)
CREM_RS_BENCH(hook_reverse_ack)
CREM_RS_BENCH(hook_crf_in_order)
CREM_RS_BENCH(hook_crf_held)
CREM_RS_BENCH(hook_crf_in_order_6104)
CREM_RS_BENCH(hook_crf_held_6104)

static struct kunit_case crem_bench_cases[] = {
	KUNIT_CASE(gf_mul_acc_throughput),
	KUNIT_CASE(gf_mul_acc_throughput_chosen),
	KUNIT_CASE(roce_parse_per_packet),
	KUNIT_CASE(csf_per_packet),
	KUNIT_CASE(csf_per_packet_m4),
	KUNIT_CASE(csf_per_packet_m4_chosen),
	KUNIT_CASE(flow_csf_per_packet),
	KUNIT_CASE(flow_csf_per_packet_m4),
	KUNIT_CASE(hook_not_roce),
	KUNIT_CASE(hook_unprotected),
	KUNIT_CASE(hook_csf_per_packet),
	KUNIT_CASE(hook_csf_per_packet_m4),
	KUNIT_CASE(hook_reverse_ack),
	KUNIT_CASE(hook_crf_in_order),
	KUNIT_CASE(hook_crf_held),
	KUNIT_CASE(hook_crf_in_order_6104),
	KUNIT_CASE(hook_crf_held_6104),
	{}
};

/* Runs last, after the functional suites. */
static struct kunit_suite crem_bench_suite = {
	.name = "crem_bench",
	.test_cases = crem_bench_cases,
};

kunit_test_suites(&crem_gf_suite, &crem_inject_suite, &crem_store_suite, &crem_flow_suite,
		  &crem_table_suite, &crem_genl_suite, &crem_bench_suite);
