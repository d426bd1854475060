/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crem's tracepoints (tracefs events/crem/): a flow's life and what its
 * engines decide, each event naming its flow by addresses, destination QP,
 * side (csf: sender, crf: receiver) and kind (requests or responses).
 * Defined here and created in helpers.c (CREATE_TRACE_POINTS); the Rust
 * datapath fires them through the crem_h_trace_* wrappers of helpers.h
 * (rust/trace.rs), as Rust Binder's rust_binder_events.c does for its own.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM crem

#if !defined(_CREM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _CREM_TRACE_H

#include <linux/tracepoint.h>
#include "helpers.h" /* struct crem_trace_key, the uapi enums */

/* The constants TP_printk compares with, for tools that read its format. */
TRACE_DEFINE_ENUM(CREM_SIDE_CSF);
TRACE_DEFINE_ENUM(CREM_FLOW_KIND_REQUESTS);

/* Addresses are kept as a struct sockaddr_in or sockaddr_in6 (of the family
 * of the flow's 16-octet mapped address, crem_trace_sockaddr in helpers.c)
 * and printed with %pISc: rpcrdma's pattern (include/trace/events/rpcrdma.h),
 * so that IPv4 reads as the dotted quad it always did and IPv6 as RFC 5952
 * text, in one fixed-size field. */
#define CREM_TP_SOCKADDR(name) __array(u8, name, sizeof(struct sockaddr_in6))
#define CREM_TP_KEY_ENTRY                                                                  \
	CREM_TP_SOCKADDR(saddr) CREM_TP_SOCKADDR(daddr) __field(u32, dqp) __field(u8, side) \
	__field(u8, kind)
#define CREM_TP_KEY_ASSIGN(k)                                                              \
	do {                                                                               \
		crem_trace_sockaddr(__entry->saddr, (k)->saddr);                           \
		crem_trace_sockaddr(__entry->daddr, (k)->daddr);                           \
		__entry->dqp = (k)->dqp;                                                   \
		__entry->side = (k)->side;                                                 \
		__entry->kind = (k)->kind;                                                 \
	} while (0)
#define CREM_TP_KEY_FMT "%pISc > %pISc dqp %u %s %s"
#define CREM_TP_KEY_ARGS                                                                   \
	__entry->saddr, __entry->daddr, __entry->dqp,                                      \
	__entry->side == CREM_SIDE_CSF ? "csf" : "crf",                                    \
	__entry->kind == CREM_FLOW_KIND_REQUESTS ? "requests" : "responses"

/* A flow is in the table and started (crem_flow_up), or removed (crem_flow_down,
 * with the CLOSE reason its engine ended with, -1: none). */
DECLARE_EVENT_CLASS(crem_flow_life,
	TP_PROTO(const struct crem_trace_key *k, const u8 *peer, int close),
	TP_ARGS(k, peer, close),
	TP_STRUCT__entry(CREM_TP_KEY_ENTRY CREM_TP_SOCKADDR(peer) __field(int, close)),
	TP_fast_assign(CREM_TP_KEY_ASSIGN(k); crem_trace_sockaddr(__entry->peer, peer);
		       __entry->close = close;),
	TP_printk(CREM_TP_KEY_FMT " peer %pISc close %d", CREM_TP_KEY_ARGS, __entry->peer,
		  __entry->close)
);
DEFINE_EVENT(crem_flow_life, crem_flow_up,
	TP_PROTO(const struct crem_trace_key *k, const u8 *peer, int close),
	TP_ARGS(k, peer, close));
DEFINE_EVENT(crem_flow_life, crem_flow_down,
	TP_PROTO(const struct crem_trace_key *k, const u8 *peer, int close),
	TP_ARGS(k, peer, close));

/* A flow-change event (enum crem_flow_event: the circuit breaker tripped or
 * cleared, a CLOSE received with @reason), as netlink's flow-change. */
TRACE_EVENT(crem_flow_change,
	TP_PROTO(const struct crem_trace_key *k, u32 event, u16 reason),
	TP_ARGS(k, event, reason),
	TP_STRUCT__entry(CREM_TP_KEY_ENTRY __field(u32, event) __field(u16, reason)),
	TP_fast_assign(CREM_TP_KEY_ASSIGN(k); __entry->event = event; __entry->reason = reason;),
	TP_printk(CREM_TP_KEY_FMT " %s reason %u", CREM_TP_KEY_ARGS,
		  __print_symbolic(__entry->event, { 0, "breaker-tripped" },
				   { 1, "breaker-cleared" }, { 2, "close-received" }),
		  __entry->reason)
);

/* The flow's FEC configuration in force changed: a sender's acknowledged,
 * or a receiver's accepted (@id: its Config ID). */
TRACE_EVENT(crem_config,
	TP_PROTO(const struct crem_trace_key *k, u8 id, u8 scheme, u8 fk, u8 fm, u16 t),
	TP_ARGS(k, id, scheme, fk, fm, t),
	TP_STRUCT__entry(CREM_TP_KEY_ENTRY __field(u8, id) __field(u8, scheme) __field(u8, fk)
			 __field(u8, fm) __field(u16, t)),
	TP_fast_assign(CREM_TP_KEY_ASSIGN(k); __entry->id = id; __entry->scheme = scheme;
		       __entry->fk = fk; __entry->fm = fm; __entry->t = t;),
	TP_printk(CREM_TP_KEY_FMT " config %u scheme %u k %u m %u t %u", CREM_TP_KEY_ARGS,
		  __entry->id, __entry->scheme, __entry->fk, __entry->fm, __entry->t)
);

/* A receiver flow decoded source packet @psn: @held (kept until the ones
 * before it go on) or on its way now; @ok false: dropped (ICRC failure, no
 * header yet, no memory; the flow's counters say which). */
TRACE_EVENT(crem_restore,
	TP_PROTO(const struct crem_trace_key *k, u32 psn, bool held, bool ok),
	TP_ARGS(k, psn, held, ok),
	TP_STRUCT__entry(CREM_TP_KEY_ENTRY __field(u32, psn) __field(bool, held)
			 __field(bool, ok)),
	TP_fast_assign(CREM_TP_KEY_ASSIGN(k); __entry->psn = psn; __entry->held = held;
		       __entry->ok = ok;),
	TP_printk(CREM_TP_KEY_FMT " psn %u%s%s", CREM_TP_KEY_ARGS, __entry->psn,
		  __entry->held ? " held" : "", __entry->ok ? "" : " dropped")
);

/* A receiver flow sent a REPAIR_REQUEST: for the block from @first (@fk
 * sources, @lost of them missing) or, in PSN-range form (@ranges), for @fk
 * ranges (@lost PSNs) from @first; @fallback: it asks for the Source Copy
 * fallback. */
TRACE_EVENT(crem_request,
	TP_PROTO(const struct crem_trace_key *k, bool ranges, bool fallback, u32 first, u8 fk,
		 u8 lost),
	TP_ARGS(k, ranges, fallback, first, fk, lost),
	TP_STRUCT__entry(CREM_TP_KEY_ENTRY __field(bool, ranges) __field(bool, fallback)
			 __field(u32, first) __field(u8, fk) __field(u8, lost)),
	TP_fast_assign(CREM_TP_KEY_ASSIGN(k); __entry->ranges = ranges;
		       __entry->fallback = fallback; __entry->first = first; __entry->fk = fk;
		       __entry->lost = lost;),
	TP_printk(CREM_TP_KEY_FMT " %s from psn %u k %u lost %u%s", CREM_TP_KEY_ARGS,
		  __entry->ranges ? "ranges" : "block", __entry->first, __entry->fk,
		  __entry->lost, __entry->fallback ? " fallback" : "")
);

#endif /* _CREM_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE crem_trace
#include <trace/define_trace.h>
