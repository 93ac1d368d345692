// SPDX-License-Identifier: BSD-3-Clause
/*
 * device.cpp -- the device: its context, its attributes and capabilities,
 * and protection domains
 *
 * Part of the fake rdma-core of the unit tests (fake_verbs.h, internal.hpp).
 */

#include "internal.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <sys/eventfd.h>

using namespace fake;

namespace fake
{

ibv_context fake_context;
fake_pd cm_pd;

namespace
{

ibv_device fake_device;
bool device_ready;

/*
 * rdma-core's inline verbs (ibv_post_send, ibv_poll_cq, ...) jump through
 * these; the library must use rpma::verbs instead, so reaching one is a bug.
 */
[[noreturn]] void direct_call(const char *what)
{
	fprintf(stderr,
		"fake_verbs: the library called %s directly instead of through rpma::verbs\n",
		what);
	abort();
}

int trap_poll_cq(ibv_cq *, int, ibv_wc *)
{
	direct_call("ibv_poll_cq");
}
int trap_req_notify_cq(ibv_cq *, int)
{
	direct_call("ibv_req_notify_cq");
}
int trap_post_srq_recv(ibv_srq *, ibv_recv_wr *, ibv_recv_wr **)
{
	direct_call("ibv_post_srq_recv");
}
int trap_post_send(ibv_qp *, ibv_send_wr *, ibv_send_wr **)
{
	direct_call("ibv_post_send");
}
int trap_post_recv(ibv_qp *, ibv_recv_wr *, ibv_recv_wr **)
{
	direct_call("ibv_post_recv");
}

} /* namespace */

void setup_device()
{
	state &s = st();
	memset(&fake_device, 0, sizeof(fake_device));
	fake_device.node_type = s.iwarp ? IBV_NODE_RNIC : IBV_NODE_CA;
	fake_device.transport_type = s.iwarp ? IBV_TRANSPORT_IWARP : IBV_TRANSPORT_IB;
	snprintf(fake_device.name, sizeof(fake_device.name), "%s",
		 s.iwarp ? "fake_iw0" : "fake_ib0");
	snprintf(fake_device.dev_name, sizeof(fake_device.dev_name), "uverbs0");
	snprintf(fake_device.dev_path, sizeof(fake_device.dev_path),
		 "/sys/class/infiniband_verbs/uverbs0");
	snprintf(fake_device.ibdev_path, sizeof(fake_device.ibdev_path), "/sys/class/infiniband/%s",
		 fake_device.name);

	if (!device_ready) {
		memset(&fake_context, 0, sizeof(fake_context));
		pthread_mutex_init(&fake_context.mutex, nullptr);
		fake_context.cmd_fd = eventfd(0, EFD_CLOEXEC);
		fake_context.async_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		device_ready = true;
	}
	fake_context.device = &fake_device;
	fake_context.num_comp_vectors = 1;
	fake_context.ops.poll_cq = trap_poll_cq;
	fake_context.ops.req_notify_cq = trap_req_notify_cq;
	fake_context.ops.post_srq_recv = trap_post_srq_recv;
	fake_context.ops.post_send = trap_post_send;
	fake_context.ops.post_recv = trap_post_recv;

	memset(&cm_pd, 0, sizeof(cm_pd));
	cm_pd.pd.context = &fake_context;
	cm_pd.pd.handle = 0xcafe;
}

fake_pd *pd_of(ibv_pd *pd)
{
	if (pd == &cm_pd.pd)
		return &cm_pd;
	return reinterpret_cast<fake_pd *>(pd);
}

bool pd_ok(ibv_pd *pd, const char *call)
{
	if (pd == &cm_pd.pd)
		return true;
	return pd && is_live(pd, kind::pd, call);
}

bool context_ok(ibv_context *ctx, const char *call)
{
	if (ctx == &fake_context)
		return true;
	misuse("%s: %p is not the fake device context", call, (void *)ctx);
	return false;
}

void pd_put(fake_pd *pd)
{
	if (pd && pd != &cm_pd && pd->users)
		pd->users--;
}

void pd_get(fake_pd *pd)
{
	if (pd && pd != &cm_pd)
		pd->users++;
}

namespace
{

struct initializer {
	initializer()
	{
		guard g(st().lock);
		setup_device();
	}
} init_once;

} /* namespace */

} /* namespace fake */

/*
 * The fake rdma-core
 */

namespace rpma::verbs
{

int query_device_ex(ibv_context *ctx, ibv_device_attr_ex *attr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_QUERY_DEVICE_EX); err != GO_ON)
		return fail_ret(err);
	if (!attr || !context_ok(ctx, "ibv_query_device_ex"))
		return fail_ret(EINVAL);

	memset(attr, 0, sizeof(*attr));
	ibv_device_attr &a = attr->orig_attr;
	snprintf(a.fw_ver, sizeof(a.fw_ver), "16.35.1012");
	a.node_guid = htobe64(0x0002c90300a1b2c3ULL);
	a.sys_image_guid = a.node_guid;
	a.max_mr_size = UINT64_MAX;
	a.page_size_cap = 0xfffff000;
	a.vendor_id = s.iwarp ? 0x8086 : 0x02c9;
	a.vendor_part_id = s.iwarp ? 0x37d2 : 4119;
	a.hw_ver = 0;
	a.max_qp = 262144;
	a.max_qp_wr = 32768;
	a.device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
			     IBV_DEVICE_AUTO_PATH_MIG | IBV_DEVICE_CHANGE_PHY_PORT |
			     IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SYS_IMAGE_GUID |
			     IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_MEM_MGT_EXTENSIONS;
	a.max_sge = 30;
	a.max_sge_rd = 30;
	a.max_cq = 16777216;
	a.max_cqe = 4194303;
	a.max_mr = 16777216;
	a.max_pd = 16777216;
	a.max_qp_rd_atom = 16;
	a.max_ee_rd_atom = 0;
	a.max_res_rd_atom = 4194304;
	a.max_qp_init_rd_atom = 16;
	a.atomic_cap = IBV_ATOMIC_HCA;
	a.max_srq = 8388608;
	a.max_srq_wr = 32767;
	a.max_srq_sge = 31;
	a.max_pkeys = 128;
	a.local_ca_ack_delay = 16;
	a.phys_port_cnt = 1;

	if (s.odp) {
		attr->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
		attr->odp_caps.per_transport_caps.rc_odp_caps =
		    s.odp_rc_caps ? s.odp_rc_caps
				  : IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
					IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
					IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
		attr->odp_caps.per_transport_caps.uc_odp_caps = 0;
		attr->odp_caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND;
		attr->xrc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_SRQ_RECV;
	}
	attr->device_cap_flags_ex = a.device_cap_flags;
	if (s.atomic_write)
		attr->device_cap_flags_ex |= FAKE_DEVICE_ATOMIC_WRITE;
	if (s.flush)
		attr->device_cap_flags_ex |=
		    FAKE_DEVICE_FLUSH_GLOBAL | FAKE_DEVICE_FLUSH_PERSISTENT;
	attr->completion_timestamp_mask = 0x7fffffffffffffffULL;
	attr->hca_core_clock = 156250;
	attr->max_dm_size = 131072;
	attr->phys_port_cnt_ex = 1;
	return 0;
}

uint8_t native_ops(const ibv_device_attr_ex &attr)
{
	/* as a build whose rdma-core has every name: the device decides */
	uint8_t ops = 0;
	if (attr.device_cap_flags_ex & FAKE_DEVICE_FLUSH_GLOBAL)
		ops |= NATIVE_FLUSH_GLOBAL;
	if (attr.device_cap_flags_ex & FAKE_DEVICE_FLUSH_PERSISTENT)
		ops |= NATIVE_FLUSH_PERSISTENT;
	if (attr.device_cap_flags_ex & FAKE_DEVICE_ATOMIC_WRITE)
		ops |= NATIVE_ATOMIC_WRITE;
	return ops;
}

uint64_t native_send_ops(uint8_t ops)
{
	uint64_t send_ops = 0;
	if (ops & (NATIVE_FLUSH_GLOBAL | NATIVE_FLUSH_PERSISTENT))
		send_ops |= FAKE_QP_EX_WITH_FLUSH;
	if (ops & NATIVE_ATOMIC_WRITE)
		send_ops |= FAKE_QP_EX_WITH_ATOMIC_WRITE;
	return send_ops;
}

static_assert(FAKE_FLUSH_GLOBAL == NATIVE_FLUSH_GLOBAL &&
		  FAKE_FLUSH_PERSISTENT == NATIVE_FLUSH_PERSISTENT,
	      "the fake's placements are the library's");

int native_flush_access(uint8_t placements)
{
	int access = 0;
	if (placements & NATIVE_FLUSH_GLOBAL)
		access |= FAKE_ACCESS_FLUSH_GLOBAL;
	if (placements & NATIVE_FLUSH_PERSISTENT)
		access |= FAKE_ACCESS_FLUSH_PERSISTENT;
	return access;
}

ibv_pd *alloc_pd(ibv_context *ctx)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_ALLOC_PD); err != GO_ON)
		return fail_null<ibv_pd>(err);
	if (!context_ok(ctx, "ibv_alloc_pd"))
		return fail_null<ibv_pd>(EINVAL);
	auto *pd = new fake_pd();
	pd->pd.context = ctx;
	pd->pd.handle = s.next_handle++;
	add_live(pd, kind::pd);
	return &pd->pd;
}

int dealloc_pd(ibv_pd *pd)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DEALLOC_PD); err != GO_ON)
		return fail_ret(err);
	if (pd == &cm_pd.pd) {
		misuse(
		    "ibv_dealloc_pd: the protection domain belongs to librdmacm (rdma_cm_id->pd)");
		return fail_ret(EINVAL);
	}
	if (!is_live(pd, kind::pd, "ibv_dealloc_pd"))
		return fail_ret(EINVAL);
	fake_pd *p = pd_of(pd);
	if (p->users)
		return fail_ret(EBUSY);
	drop_live(p);
	delete p;
	return 0;
}

} /* namespace rpma::verbs */

/*
 * The control interface
 */

extern "C" {

struct ibv_context *fake_verbs_context(void)
{
	return &fake_context;
}

void fake_verbs_set_iwarp(bool iwarp)
{
	guard g(st().lock);
	st().iwarp = iwarp;
	setup_device();
}

void fake_verbs_set_odp(bool odp)
{
	guard g(st().lock);
	st().odp = odp;
	st().odp_rc_caps = 0;
}

void fake_verbs_set_odp_rc_caps(uint32_t rc_caps)
{
	guard g(st().lock);
	st().odp = true;
	st().odp_rc_caps = rc_caps;
}

void fake_verbs_set_native_atomic_write(bool supported)
{
	guard g(st().lock);
	st().atomic_write = supported;
}

void fake_verbs_set_native_flush(bool supported)
{
	guard g(st().lock);
	st().flush = supported;
}

} /* extern "C" */
