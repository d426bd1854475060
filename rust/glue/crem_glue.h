/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What C and Rust share outside the engine interface (crem_engine.h): the
 * hook points, the module parameters (params.c) and the hook KUnit's C
 * calls. Everything else of crem.ko is Rust's.
 */
#ifndef CREM_GLUE_H
#define CREM_GLUE_H

#include <linux/types.h>
#include "crem_engine.h"

struct sk_buff;

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
