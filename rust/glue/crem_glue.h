/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C half of crem.ko: the pernet registration with its netfilter hooks,
 * the per-netns counters and the module parameters, until they are Rust's.
 * The datapath (flows, their table, stores, socket, injection, removal,
 * collector, events), the configuration and the netlink handlers
 * (rust/netlink/) are Rust's, reached through the crem_rs_* functions.
 */
#ifndef CREM_GLUE_H
#define CREM_GLUE_H

#include <linux/types.h>
#include <linux/atomic.h>
#include "crem_engine.h"

struct net;
struct socket; struct sk_buff; struct nf_hook_state;

/*
 * Datapath counters kept in C, reported after the Rust ones in the stats
 * attribute order of netlink/crem.yaml (append-only ABI).
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

struct crem_net {
	struct net *net;
	void *rs; /* Rust per-netns state (rust/netns.rs) */
	atomic64_t mem; /* octets the flows keep (rust/netns.rs charges) */
	atomic64_t dp[CREM_NR_DP];
	/* CREM datagrams by msgs-by-type slot (rust/socket.rs): received at the socket, sent. */
	atomic64_t msg_in[CREM_MSG_SLOTS], msg_out[CREM_MSG_SLOTS];
};

struct crem_net *crem_net(const struct net *net);

/* Hook points the Rust datapath distinguishes (stable values, shared with Rust). */
enum crem_hook {
	CREM_HOOK_LOCAL_IN = 0,
	CREM_HOOK_FORWARD = 1,
	CREM_HOOK_LOCAL_OUT = 2,
};

/* Implemented in Rust (rust/netns.rs, rust/hook.rs). */
/*
 * @cn: C's state of @net, whose datapath counters @dp (CREM_NR_DP),
 * @msg_in, @msg_out and memory count @mem outlive the Rust state. A new
 * netns's configuration.
 */
void *crem_rs_net_init(struct net *net, struct crem_net *cn, atomic64_t *dp,
		       atomic64_t *msg_in, atomic64_t *msg_out, atomic64_t *mem);
/* Closes the netns's socket, removes its flows and frees the state. */
void crem_rs_net_exit(void *state);
/*
 * Every packet at our hooks (@hook: enum crem_hook) in the netns whose Rust
 * state is @state. An NF_* verdict.
 */
struct nf_hook_state;
unsigned int crem_rs_hook(void *state, u32 hook, struct sk_buff *skb,
			  const struct nf_hook_state *nf);
/* Seconds a flow may stay idle before the collector removes it (rust/collector.rs). */
extern unsigned int crem_flow_idle_s;
#ifdef CREM_TEST_BUILD
/* Test build: corrupt every Nth coded REPAIR sent (rust/socket.rs; 0: never). */
extern unsigned int crem_fault_corrupt_repair;
#endif
/* The Rust state of @net (for the netlink handlers, rust/netlink/). */
void *crem_glue_state(const struct net *net);

/* Every hook point's netfilter hook (@priv: enum crem_hook); KUnit's bench calls it. */
unsigned int crem_nf_hook(void *priv, struct sk_buff *skb, const struct nf_hook_state *state);
/* Implemented in C (crem_glue.c), called from Rust module init/exit. */
int crem_glue_register(void);
void crem_glue_unregister(void);

#endif
