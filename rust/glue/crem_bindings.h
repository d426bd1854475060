/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Input of the module-local bindgen step (Kbuild): what rust/ffi.rs exposes
 * from C — the C half's interface, the engine interface, the static-inline
 * wrappers of helpers.h with the headers they include, and the netfilter
 * constants of the hook. kernel::bindings in 6.12 covers none of these.
 */
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/capability.h>
#include "crem_glue.h"
#include "crem_engine.h"
#include "crem_flow.h"
#include "helpers.h"
#include "crem-nl-gen.h"
