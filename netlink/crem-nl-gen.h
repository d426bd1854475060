/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	netlink/crem.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_CREM_GEN_H
#define _LINUX_CREM_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include "../include/uapi/linux/crem.h"

int crem_nl_validate_addr(const struct nlattr *attr, struct netlink_ext_ack *extack);
int crem_nl_validate_reporter(const struct nlattr *attr, struct netlink_ext_ack *extack);

/* Common nested types */
extern const struct nla_policy crem_peer_nl_policy[CREM_A_PEER_ADDR + 1];

/* Ops table for crem */
extern const struct genl_split_ops crem_nl_ops[10];

int crem_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info);
int crem_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info);
int crem_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info);
int crem_nl_stats_reset_doit(struct sk_buff *skb, struct genl_info *info);
int crem_nl_flow_get_doit(struct sk_buff *skb, struct genl_info *info);
int crem_nl_flow_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int crem_nl_flow_del_doit(struct sk_buff *skb, struct genl_info *info);
int crem_nl_flow_set_doit(struct sk_buff *skb, struct genl_info *info);
int crem_nl_flow_new_doit(struct sk_buff *skb, struct genl_info *info);
int crem_nl_flow_reset_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	CREM_NLGRP_EVENTS,
};

#endif /* _LINUX_CREM_GEN_H */
