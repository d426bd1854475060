/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C half of crem.ko: the kernel registrations whose structures Rust cannot
 * describe without bindings (pernet_operations, nf_hook_ops, genl_family) and
 * wrappers for static-inline APIs. Policy lives in Rust; C calls into it
 * through the crem_rs_* functions declared here and defined in rust/.
 */
#ifndef CREM_GLUE_H
#define CREM_GLUE_H

#include <linux/types.h>

struct net;

/* Hook points the Rust datapath distinguishes (stable values, shared with Rust). */
enum crem_hook {
	CREM_HOOK_LOCAL_IN = 0,
	CREM_HOOK_FORWARD = 1,
	CREM_HOOK_LOCAL_OUT = 2,
};

/* Implemented in Rust (rust/netns.rs, rust/hook.rs). */
void *crem_rs_net_init(struct net *net);
void crem_rs_net_exit(void *state);
/* Returns an NF_* verdict. @hdr holds the first @len bytes from the IP header. */
unsigned int crem_rs_roce_packet(void *state, u32 hook, u8 family,
				 const u8 *hdr, u32 hdr_len, u32 pkt_len);
/* Fill the stats reply of CREM_CMD_GET_STATS: one u64 per counter index. */
u32 crem_rs_stats(void *state, u64 *out, u32 max);

/* Implemented in C (crem_glue.c), called from Rust module init/exit. */
int crem_glue_register(void);
void crem_glue_unregister(void);

#endif
