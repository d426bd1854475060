/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What C and Rust share outside the engine interface (crem_engine.h): the
 * datapath counters' order, the hook points, the module parameters
 * (params.c) and the hook KUnit's C calls. Everything else of crem.ko is
 * Rust's.
 */
#ifndef CREM_GLUE_H
#define CREM_GLUE_H

#include <linux/types.h>
#include "crem_engine.h"

struct sk_buff;

/*
 * The datapath's counters (rust/netns.rs), reported after the hook's in
 * the stats attribute order of netlink/crem.yaml (append-only ABI).
 */
enum crem_dp {
	CREM_EV_FLOW_UP,
	CREM_DROP_FLOW_LIMIT,
	CREM_DROP_FLOW_ALLOC,
	CREM_DROP_MEMORY,
	CREM_DROP_LINEARIZE,
	CREM_EV_MSG_IN,
	CREM_EV_MSG_OUT,
	CREM_DROP_MSG_INVALID,
	CREM_DROP_MSG_PEER,
	CREM_DROP_MSG_NO_FLOW,
	CREM_DROP_SEND,
	/* After the stats attribute "totals", from CREM_A_STATS_FLOWS_REMOVED. */
	CREM_EV_FLOW_DOWN,
	CREM_DROP_NOTIFY,
	CREM_EV_FLOW_EXPIRED, /* CREM_A_STATS_FLOWS_EXPIRED */
	CREM_EV_PATH_REPORT, /* CREM_A_STATS_PATH_REPORTS */
	/* After msgs-out-by-type, from CREM_A_STATS_GSO_SEGMENTED. */
	CREM_EV_GSO_SEGMENTED,
	CREM_DROP_GSO,
	CREM_SKIP_BRIDGED,
	CREM_DROP_DEV_GONE,
	CREM_NR_DP
};

/* Hook points the Rust datapath distinguishes (stable values, shared with Rust). */
enum crem_hook {
	CREM_HOOK_LOCAL_IN = 0,
	CREM_HOOK_FORWARD = 1,
	CREM_HOOK_LOCAL_OUT = 2,
};

/* Seconds a flow may stay idle before the collector removes it (rust/collector.rs). */
extern unsigned int crem_flow_idle_s;
#ifdef CREM_TEST_BUILD
/* Test build: corrupt every Nth coded REPAIR sent (rust/socket.rs; 0: never). */
extern unsigned int crem_fault_corrupt_repair;
#endif

/*
 * Every hook point's netfilter hook (@priv: enum crem_hook), Rust's
 * (rust/hook_points.rs); KUnit's bench calls it.
 */
struct nf_hook_state;
unsigned int crem_nf_hook(void *priv, struct sk_buff *skb, const struct nf_hook_state *state);

#endif
