/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One-line wrappers of the static inlines and macros the module's Rust calls
 * (rust/kernel_ext), which bindgen cannot: helpers.c defines them, the
 * module-local bindgen step (Kbuild) reads this file, so a prototype that
 * drifts from its definition is a build error. Nothing here decides
 * anything; each wrapper is its kernel function under another name. The
 * module parameters (module_param is a macro too) are helpers.c's; the
 * generated netlink tables (crem-nl-gen.h) and netfilter's constants are
 * included for the same bindgen step.
 */
#ifndef CREM_HELPERS_H
#define CREM_HELPERS_H

#include <linux/types.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/capability.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>
#include <linux/memcontrol.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/ip6_route.h>
#include <net/ip6_tunnel.h>
#include <net/udp_tunnel.h>
#include <net/genetlink.h>
#include <linux/rtnetlink.h>
#ifdef CONFIG_X86
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/fpu/types.h>
#endif

/* The okfn of a netfilter hook (NF_HOOK). */
typedef int (*crem_h_okfn)(struct net *net, struct sock *sk, struct sk_buff *skb);

#ifdef CONFIG_X86
/* asm/fpu/api.h, asm/cpufeature.h */
void crem_h_kernel_fpu_begin(void);
bool crem_h_boot_cpu_has(unsigned int feature);
#endif

/* bottom_half.h */
void crem_h_local_bh_disable(void);
void crem_h_local_bh_enable(void);

/* rcupdate.h */
void crem_h_rcu_read_lock(void);
void crem_h_rcu_read_unlock(void);

/* slab.h: a flow's memory (kvzalloc with the flow's GFP flags: charged
 * to the active memory cgroup, failing there rather than OOM-killing) */
void *crem_h_kvzalloc_flow(size_t size);
/* string.h: a copy in atomic context (kmemdup, GFP_ATOMIC) */
void *crem_h_kmemdup_atomic(const void *p, size_t len);

/* sched.h: a voluntary preemption point (process context) */
void crem_h_cond_resched(void);

/* workqueue.h: INIT_WORK (one lockdep class for the module's items) */
void crem_h_init_work(struct work_struct *w, work_func_t f);
/* workqueue.h: INIT_DELAYED_WORK (its timer's too) */
void crem_h_init_delayed_work(struct delayed_work *w, work_func_t f);

/* memcontrol.h, sched/mm.h: the current task's memory cgroup (a counted
 * reference, or NULL), its release, and the active cgroup's swap; as void *,
 * the Rust side holds it opaque (struct mem_cgroup is not FFI-safe there) */
void *crem_h_memcg_of_current(void);
void crem_h_memcg_put(void *m);
void *crem_h_set_active_memcg(void *m);

/* percpu.h (zeroed; freed with free_percpu) */
void __percpu *crem_h_alloc_percpu(size_t size, size_t align);
void *crem_h_this_cpu_ptr(void __percpu *p);
void *crem_h_per_cpu_ptr(void __percpu *p, unsigned int cpu);
/* cpumask.h: the next possible CPU after @cpu (-1: the first), or >= nr_cpu_ids */
unsigned int crem_h_next_possible_cpu(int cpu);
unsigned int crem_h_nr_cpu_ids(void);

/* skbuff.h */
unsigned char *crem_h_skb_data(const struct sk_buff *skb);
unsigned int crem_h_skb_len(const struct sk_buff *skb);
unsigned int crem_h_skb_headlen(const struct sk_buff *skb);
unsigned int crem_h_skb_headroom(const struct sk_buff *skb);
int crem_h_skb_tailroom(const struct sk_buff *skb);
int crem_h_skb_cloned(const struct sk_buff *skb);
void crem_h_skb_reserve(struct sk_buff *skb, int len);
void crem_h_skb_reset_network_header(struct sk_buff *skb);
void crem_h_skb_reset_transport_header(struct sk_buff *skb);
void crem_h_skb_reset_mac_header(struct sk_buff *skb);
/* The MAC header was set and ends where data begins (as it arrived). */
bool crem_h_skb_mac_header_at_data(const struct sk_buff *skb, unsigned int mac_len);
void crem_h_skb_set_mac_len(struct sk_buff *skb, u16 len);
int crem_h_skb_network_offset(const struct sk_buff *skb);
int crem_h_skb_transport_offset(const struct sk_buff *skb);
__be16 crem_h_skb_protocol(const struct sk_buff *skb);
u32 crem_h_skb_mark(const struct sk_buff *skb);
void crem_h_skb_set_protocol(struct sk_buff *skb, __be16 proto);
void crem_h_skb_set_mark(struct sk_buff *skb, u32 mark);
void crem_h_skb_set_pkt_type(struct sk_buff *skb, u8 type);
void crem_h_skb_set_csum_none(struct sk_buff *skb);
struct net_device *crem_h_skb_dev(const struct sk_buff *skb);
void crem_h_skb_set_dev(struct sk_buff *skb, struct net_device *dev);
/* skb_iif and IPCB(skb)->iif: the device it is forwarded from. */
void crem_h_skb_set_iif(struct sk_buff *skb, int ifindex);
bool crem_h_skb_has_dst(const struct sk_buff *skb);
void crem_h_skb_dst_force(struct sk_buff *skb);
void crem_h_skb_dst_drop(struct sk_buff *skb);
void crem_h_nf_reset_ct(struct sk_buff *skb);
void crem_h_kfree_skb_reason(struct sk_buff *skb, enum skb_drop_reason reason);

/* The hook's packet (rust/hook.rs). */
const void *crem_h_skb_header_pointer(const struct sk_buff *skb, int off, int len, void *buf);
bool crem_h_skb_is_gso(const struct sk_buff *skb);
/* A GSO packet's segments (0 for a frag list, whose segments are skbs of
 * their own) and, at *@size, their payload's size. */
unsigned int crem_h_skb_gso_segs(const struct sk_buff *skb, unsigned int *size);
int crem_h_skb_linearize(struct sk_buff *skb);
/* br_netfilter's bridged packet (false without CONFIG_BRIDGE_NETFILTER). */
bool crem_h_skb_bridged(const struct sk_buff *skb);
/* skb_gso_segment(@skb, 0), NULL for an error too. */
struct sk_buff *crem_h_skb_gso_segment(struct sk_buff *skb);
/* A segment list's next (skb->next), and @skb taken off it. */
struct sk_buff *crem_h_skb_list_next(struct sk_buff *skb);
void crem_h_skb_mark_not_on_list(struct sk_buff *skb);
/* eth_hdr(@skb)->h_source if the MAC header was set and is an Ethernet one. */
const unsigned char *crem_h_skb_eth_source(const struct sk_buff *skb);
void crem_h_skb_queue_head_init(struct sk_buff_head *q);
bool crem_h_skb_queue_empty(const struct sk_buff_head *q);
/* @state: a struct nf_hook_state (which the kernel crate has no type for). */
int crem_h_nf_okfn(const void *state, struct sk_buff *skb);
u8 crem_h_nf_pf(const void *state);
struct net *crem_h_nf_net(const void *state);

/* netdevice.h, rtnetlink.h: a netdevice notifier's device, its netns, RTNL held */
struct net_device *crem_h_netdev_notifier_info_to_dev(void *info);
struct net *crem_h_dev_net(const struct net_device *dev);
void crem_h_assert_rtnl(void);

/* netdevice.h */
unsigned int crem_h_dev_mtu(const struct net_device *dev);
int crem_h_dev_ifindex(const struct net_device *dev);
unsigned short crem_h_dev_type(const struct net_device *dev);
const unsigned char *crem_h_dev_addr(const struct net_device *dev);

/* route.h, dst.h, netfilter.h */
unsigned int crem_h_skb_rt_type(const struct sk_buff *skb);
int crem_h_dst_input(struct sk_buff *skb);
int crem_h_dst_output(struct net *net, struct sk_buff *skb);
int crem_h_nf_hook_ipv4_prerouting(struct net *net, struct sk_buff *skb, struct net_device *in,
				   crem_h_okfn okfn);

/*
 * ipv6.h, ip6_route.h, ipv6_stubs.h: a gateway's restored IPv6 packet
 * (rust/inject.rs). Without CONFIG_IPV6 the route fails (-EAFNOSUPPORT)
 * and nothing else is reached.
 */
/* skb_iif and IP6CB(skb) as ipv6_rcv leaves them: iif, nhoff, no flags. */
void crem_h_skb_set_iif6(struct sk_buff *skb, int ifindex);
int crem_h_nf_hook_ipv6_prerouting(struct net *net, struct sk_buff *skb, struct net_device *in,
				   crem_h_okfn okfn);
/* ipv6_stub->ipv6_route_input(@skb) (ip6_route_input is not exported): the
 * input route's error. */
int crem_h_ipv6_route_input(struct sk_buff *skb);
/* Its IPv6 route forwards (not local, anycast or reject). */
bool crem_h_skb_rt6_forwards(const struct sk_buff *skb);

/*
 * udp_tunnel.h, sock.h, inet_sock.h, route.h: the CREM socket
 * (rust/kernel_ext/udp_tunnel.rs). udp_sock_create() and
 * setup_udp_tunnel_sock() take configuration structs of unions and
 * bitfields, and ip_route_output_key() a flowi4 whose fields are macros:
 * their wrappers fill them from scalars, deciding nothing.
 */
typedef int (*crem_h_encap_rcv)(struct sock *sk, struct sk_buff *skb);
/* udp_sock_create() of an IPv4 socket bound to INADDR_ANY:@port. */
int crem_h_udp_sock_create4(struct net *net, __be16 port, struct socket **sockp);
/* An IPv6-only UDP socket of net bound to port; -EAFNOSUPPORT without IPv6. */
int crem_h_udp_sock_create6(struct net *net, __be16 port, struct socket **sockp);
/* Sends skb (data: the UDP payload) from sk's port sport to daddr:dport
 * with traffic class tclass, routed in net; consumed either way. 0, or the
 * errno of a failed route lookup. */
int crem_h_udp6_xmit(struct net *net, struct sock *sk, struct sk_buff *skb,
		     const struct in6_addr *daddr, __be16 sport, __be16 dport, u8 tclass);
/* setup_udp_tunnel_sock() with @user_data and @rcv (encap type 1), nothing else. */
void crem_h_setup_udp_tunnel_sock(struct net *net, struct socket *sock, void *user_data,
				  crem_h_encap_rcv rcv);
void *crem_h_sk_user_data(const struct sock *sk);
void crem_h_sk_clear_user_data(struct sock *sk);
/* inet_sk(sock->sk)->inet_sport and the socket's sk. */
__be16 crem_h_socket_sport(const struct socket *sock);
struct sock *crem_h_socket_sk(const struct socket *sock);
/*
 * ip_route_output_key() of UDP from @sport to @daddr, @dport: the route, or
 * NULL with *@err set; *@saddr: the source address it chose.
 */
struct rtable *crem_h_route_output_udp(struct net *net, __be32 daddr, __be16 sport,
				       __be16 dport, __be32 *saddr, int *err);
u8 crem_h_rt_hoplimit(struct rtable *rt);
/* The MTU of the route to @daddr (ip_route_output_key, dst_mtu), 0 if none;
 * *@ifindex (if not NULL): its output interface. */
unsigned int crem_h_route_mtu4(struct net *net, __be32 daddr, int *ifindex);
/* The MTU of the route to @daddr, 0 if none (or no IPv6 in this kernel);
 * *@ifindex (if not NULL): its output interface. */
unsigned int crem_h_route_mtu6(struct net *net, const struct in6_addr *daddr, int *ifindex);
/* The netns's cookie (unique on this host, never reused). */
u64 crem_h_net_cookie(const struct net *net);
/* The Path Reporter's drop probe, registered with @data (a reporter). */
int crem_h_drop_probe_register(void *data);
/* Unregisters it and waits until no probe with @data runs. */
void crem_h_drop_probe_unregister(void *data);

/* net_namespace.h: struct net is opaque to Rust (rust/kernel_ext/net.rs). */
/* net_generic(): the subsystem @id's slot in @net (rust/kernel_ext/pernet.rs). */
void *crem_h_net_generic(const struct net *net, unsigned int id);
/* net->user_ns != &init_user_ns */
bool crem_h_net_other_userns(const struct net *net);
/* One step of for_each_net (under net_rwsem): the netns after @net (NULL: the first), or NULL. */
struct net *crem_h_net_next(struct net *net);
const u8 *crem_h_skb_network_header(const struct sk_buff *skb);
void crem_h_skb_queue_tail(struct sk_buff_head *q, struct sk_buff *skb);
struct sk_buff *crem_h_skb_dequeue(struct sk_buff_head *q);

/*
 * genetlink.h, netlink.h, af_netlink.c: the netlink handlers
 * (rust/kernel_ext/genl.rs). genl_info and genl_family stay opaque there.
 */
struct sk_buff *crem_h_genlmsg_new(size_t payload, gfp_t gfp);
size_t crem_h_nlmsg_goodsize(void);
void crem_h_nlmsg_free(struct sk_buff *skb);
void *crem_h_genlmsg_iput(struct sk_buff *skb, const struct genl_info *info);
void crem_h_genlmsg_end(struct sk_buff *skb, void *hdr);
void crem_h_genlmsg_cancel(struct sk_buff *skb, void *hdr);
int crem_h_genlmsg_reply(struct sk_buff *skb, struct genl_info *info);
int crem_h_genlmsg_multicast_netns(const struct genl_family *f, struct net *net,
				   struct sk_buff *skb, u32 group, gfp_t gfp);
bool crem_h_genl_has_listeners(const struct genl_family *f, struct net *net, u32 group);
/* genlmsg_put of a dump's part (NLM_F_MULTI, the requester's port and
 * sequence), then genl_dump_check_consistent. */
void *crem_h_genlmsg_put_dump(struct sk_buff *skb, struct netlink_callback *cb,
			      const struct genl_family *f, u8 cmd);
struct net *crem_h_genl_info_net(const struct genl_info *info);
struct nlattr **crem_h_genl_info_attrs(const struct genl_info *info);
/* The request's attributes in order: genlmsg_data(), @*len octets */
const struct nlattr *crem_h_genl_info_payload(const struct genl_info *info, int *len);
struct netlink_ext_ack *crem_h_genl_info_extack(const struct genl_info *info);
struct net *crem_h_skb_sock_net(const struct sk_buff *skb);
/* netlink_ns_capable(@skb, @net->user_ns, @cap) */
bool crem_h_netlink_net_capable(const struct sk_buff *skb, const struct net *net, int cap);
int crem_h_nla_parse_nested(struct nlattr **tb, int max, const struct nlattr *nla,
			    const struct nla_policy *policy, struct netlink_ext_ack *extack);
struct nlattr *crem_h_nla_nest_start(struct sk_buff *skb, int type);
void crem_h_nla_nest_end(struct sk_buff *skb, struct nlattr *start);
void crem_h_nla_nest_cancel(struct sk_buff *skb, struct nlattr *start);
/* GENL_MCAST_CAP_NET_ADMIN (a BIT() macro, which bindgen does not evaluate),
 * for the family's multicast groups (rust/kernel_ext/genl.rs). */
extern const u8 crem_h_genl_mcast_cap_net_admin;
/* NL_SET_ERR_MSG (@msg static) and NL_SET_ERR_MSG_FMT("%s", @text), each
 * with NL_SET_BAD_ATTR(@bad) if @bad; NL_SET_ERR_ATTR_MISS. */
void crem_h_extack_msg(struct netlink_ext_ack *extack, const char *msg, const struct nlattr *bad);
void crem_h_extack_fmt(struct netlink_ext_ack *extack, const char *text, const struct nlattr *bad);
void crem_h_extack_miss(struct netlink_ext_ack *extack, const struct nlattr *nest, u32 type);

/*
 * The module's tracepoints (crem_trace.h, created in helpers.c): each
 * wrapper fires one (a static key: nothing is done unless it is enabled).
 */
struct crem_trace_key {
	/* the flow's key (rust/table.rs FlowKey); addresses as rust/addr.rs
	 * NetAddr: 16 octets, IPv4 mapped (::ffff:a.b.c.d) */
	u8 saddr[16], daddr[16];
	u32 dqp;
	u8 side, kind; /* enum crem_side, enum crem_flow_kind */
};
void crem_h_trace_flow_up(const struct crem_trace_key *k, const u8 *peer);
void crem_h_trace_flow_down(const struct crem_trace_key *k, const u8 *peer, int close);
void crem_h_trace_flow_change(const struct crem_trace_key *k, u32 event, u16 reason);
void crem_h_trace_config(const struct crem_trace_key *k, u8 id, u8 scheme, u8 fk, u8 fm, u16 t);
void crem_h_trace_restore(const struct crem_trace_key *k, u32 psn, bool held, bool ok);
bool crem_h_trace_request_enabled(void);
void crem_h_trace_request(const struct crem_trace_key *k, bool ranges, bool fallback, u32 first,
			  u8 fk, u8 lost);

/* Module parameters (helpers.c): seconds a flow may stay idle before the
 * collector removes it (rust/collector.rs); test build: corrupt every Nth
 * coded REPAIR sent (rust/socket.rs; 0: never). */
extern unsigned int crem_flow_idle_s;
#ifdef CREM_TEST_BUILD
extern unsigned int crem_fault_corrupt_repair;
/* The kernel's jhash2, which rust/table.rs ports: KUnit compares them. */
u32 crem_h_jhash2(const u32 *k, u32 length, u32 initval);
#endif

#include "crem-nl-gen.h"

#endif
