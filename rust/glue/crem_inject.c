// SPDX-License-Identifier: GPL-2.0
/*
 * Restored and held packets go on toward the RDMA receiver as if they came
 * from the network: in gateway mode, out of the forwarding route; in host
 * mode, into this host's receive path on the device the flow arrives on.
 * There they pass the LOCAL_IN hook again, where the CRF sees a PSN it has
 * already delivered (a duplicate, counted as such) and lets it through.
 *
 * Known gap (README, issue 12 item 10): in gateway mode a restored packet
 * leaves by the route to its destination, without the FORWARD rules, the
 * conntrack/NAT and the iif/mark routing its original would have met.
 * Entering it through the input device's receive path instead (as host
 * mode does) was tried and made the VM hang under churn; it needs its own
 * work.
 *
 * A restored packet is rebuilt around its RoCEv2 UDP payload from the flow's
 * template (addresses, source port, DSCP, TTL of its last packet); UDP
 * checksum 0 as RoCEv2 allows, and no ECN marking (the draft: "Restored
 * packets carry no ECN marking"; a CE of the lost original is not ours to
 * repeat, and the template's is another packet's). The caller fills in the
 * IPv4 Identification (solved from the ICRC) and the header checksum.
 */
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/dst.h>
#include <net/inet_ecn.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/netfilter.h>
#include "crem_flow.h"

#define ROCEV2_UDP_PORT 4791

struct sk_buff *crem_build_restored(struct crem_flow *f, const u8 *p, u32 len)
{
	struct net *net = f->cn->net;
	struct flowi4 fl4 = { .daddr = f->key.daddr, .flowi4_proto = IPPROTO_UDP };
	struct sk_buff *skb;
	struct udphdr *uh;
	struct iphdr *iph;
	struct rtable *rt = NULL;
	u32 hlen = sizeof(*iph) + sizeof(*uh);

	if (!f->host) {
		rt = ip_route_output_key(net, &fl4);
		if (IS_ERR(rt))
			return NULL;
	}
	skb = alloc_skb(LL_MAX_HEADER + hlen + len, GFP_ATOMIC);
	if (!skb) {
		if (rt)
			ip_rt_put(rt);
		return NULL;
	}
	skb_reserve(skb, LL_MAX_HEADER + hlen);
	skb_put_data(skb, p, len);
	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = f->sport;
	uh->dest = htons(ROCEV2_UDP_PORT);
	uh->len = htons(sizeof(*uh) + len);
	uh->check = 0;
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = f->tos & ~INET_ECN_MASK;
	iph->tot_len = htons(hlen + len);
	iph->id = 0;
	iph->frag_off = f->frag_off;
	/* The TTL the original would have had after this hop. */
	iph->ttl = f->ttl;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = f->key.saddr;
	iph->daddr = f->key.daddr; /* id and checksum: crem_glue_crf_restored */
	skb->protocol = htons(ETH_P_IP);
	skb->ip_summed = CHECKSUM_NONE;
	if (rt)
		skb_dst_set(skb, &rt->dst);
	return skb;
}

/*
 * Host mode: @skb (network header at data) enters the receive path as if
 * @dev had received it, so it needs a link-layer header like any received
 * frame: packet taps (tcpdump, dhclient's LPF socket) push back to
 * skb_mac_header() before their filter, tc ingress and generic XDP read it.
 * A held original still has the one it arrived with; a restored packet gets
 * the header of the flow's last packet (its source MAC, our address, IPv4).
 */
static void crem_set_link_header(struct crem_flow *f, struct sk_buff *skb,
				 struct net_device *dev)
{
	struct ethhdr *eth;

	if (skb_mac_header_was_set(skb) && skb_mac_header(skb) + ETH_HLEN == skb->data) {
		/* As it arrived: only re-point data and type at it. */
		skb_push(skb, ETH_HLEN);
		skb->protocol = eth_type_trans(skb, dev);
		return;
	}
	if (dev->type != ARPHRD_ETHER || skb_headroom(skb) < ETH_HLEN) {
		/* No link header to make: an empty one (tap sees the IP header). */
		skb_reset_mac_header(skb);
		skb->mac_len = 0;
		skb->protocol = htons(ETH_P_IP);
		skb->pkt_type = PACKET_HOST;
		return;
	}
	eth = skb_push(skb, ETH_HLEN);
	ether_addr_copy(eth->h_dest, dev->dev_addr);
	ether_addr_copy(eth->h_source, f->h_source);
	eth->h_proto = htons(ETH_P_IP);
	skb->protocol = eth_type_trans(skb, dev);
}

static int crem_deliver_local(struct crem_flow *f, struct sk_buff *skb)
{
	struct net_device *dev;
	int err;

	rcu_read_lock();
	dev = dev_get_by_index_rcu(f->cn->net, f->ifindex);
	if (!dev) {
		rcu_read_unlock();
		kfree_skb_reason(skb, SKB_DROP_REASON_DEV_READY);
		return -ENODEV;
	}
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	skb_reset_network_header(skb);
	skb->dev = dev;
	crem_set_link_header(f, skb, dev);
	/* eth_type_trans classed it by the MAC: it is ours either way. */
	skb->pkt_type = PACKET_HOST;
	err = netif_rx(skb) == NET_RX_SUCCESS ? 0 : -ENOBUFS;
	rcu_read_unlock();
	return err;
}

void crem_inject(struct crem_flow *f, struct sk_buff *skb)
{
	int err;

	if (f->host)
		err = crem_deliver_local(f, skb);
	else
		err = dst_output(f->cn->net, NULL, skb);
	if (err)
		f->ctr.inject_fail++;
	else
		f->ctr.injected++;
}
