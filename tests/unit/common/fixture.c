/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fixture.c -- shared pieces of the connection tests (see fixture.h)
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <poll.h>

#include "alloc_hooks.h"
#include "fixture.h"

struct rpma_peer *fx_peer;

static bool fx_native_atomic_write;
static bool fx_native_flush;
static unsigned fx_logged[RPMA_LOG_LEVEL_DEBUG + 1];
static char fx_last_message[1024];
static pthread_mutex_t fx_log_lock = PTHREAD_MUTEX_INITIALIZER;

static void fx_log(enum rpma_log_level level, const char *file_name, const int line_no,
		   const char *function_name, const char *message_format, ...)
{
	/* a library thread (GPSPM's) logs while the test counts */
	if (level >= RPMA_LOG_LEVEL_FATAL && level <= RPMA_LOG_LEVEL_DEBUG)
		__atomic_fetch_add(&fx_logged[level], 1, __ATOMIC_RELEASE);
	va_list ap;
	va_start(ap, message_format);
	pthread_mutex_lock(&fx_log_lock);
	vsnprintf(fx_last_message, sizeof(fx_last_message), message_format, ap);
	pthread_mutex_unlock(&fx_log_lock);
	va_end(ap);
	if (getenv("FX_LOG") != NULL)
		fprintf(stderr, "%s:%d %s(): %s", file_name, line_no, function_name,
			fx_last_message);
}

const char *fx_log_last(void)
{
	return fx_last_message;
}

unsigned fx_log_count(enum rpma_log_level level)
{
	return __atomic_load_n(&fx_logged[level], __ATOMIC_ACQUIRE);
}

void fx_log_reset(void)
{
	memset(fx_logged, 0, sizeof(fx_logged));
	fx_last_message[0] = '\0';
}

void fx_fresh(void)
{
	fake_verbs_reset();
	fake_verbs_set_native_atomic_write(fx_native_atomic_write);
	fake_verbs_set_native_flush(fx_native_flush);
	fx_log_reset();
	assert_int_equal(rpma_log_set_function(fx_log), 0);
	assert_int_equal(fake_verbs_live_objects(), 0);
	fx_peer = NULL;
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &fx_peer), 0);
	assert_non_null(fx_peer);
}

void fx_release(void)
{
	if (fake_verbs_misuse() != 0)
		fail_msg("rdma-core misused %u time(s), last: %s", fake_verbs_misuse(),
			 fake_verbs_last_misuse());
	if (fx_peer != NULL)
		assert_int_equal(rpma_peer_delete(&fx_peer), 0);
	assert_null(fx_peer);
	if (fake_verbs_live_objects() != 0)
		fail_msg("%d rdma-core object(s) left behind", fake_verbs_live_objects());
}

void fx_discard(void)
{
	if (fx_peer != NULL)
		(void)rpma_peer_delete(&fx_peer);
	fx_fresh();
}

int fx_setup(void **state)
{
	(void)state;
	fx_native_atomic_write = false;
	fx_native_flush = false;
	fx_fresh();
	return 0;
}

int fx_setup_native(void **state)
{
	(void)state;
	fx_native_atomic_write = true;
	fx_native_flush = true;
	fx_fresh();
	return 0;
}

int fx_setup_native_atomic_write(void **state)
{
	(void)state;
	fx_native_atomic_write = true;
	fx_native_flush = false;
	fx_fresh();
	return 0;
}

int fx_teardown(void **state)
{
	(void)state;
	fx_release();
	fx_native_atomic_write = false;
	fx_native_flush = false;
	return 0;
}

struct rpma_conn_cfg *fx_cfg(uint32_t cq_size, uint32_t rcq_size, bool shared_channel)
{
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_int_equal(rpma_conn_cfg_set_cq_size(cfg, cq_size), 0);
	assert_int_equal(rpma_conn_cfg_set_rcq_size(cfg, rcq_size), 0);
	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, shared_channel), 0);
	return cfg;
}

void fx_cfg_delete(struct rpma_conn_cfg **cfg)
{
	assert_int_equal(rpma_conn_cfg_delete(cfg), 0);
	assert_null(*cfg);
}

struct rpma_conn_req *fx_req_active(const struct rpma_conn_cfg *cfg, struct rdma_cm_id **id)
{
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, cfg, &req), 0);
	assert_non_null(req);
	struct rdma_cm_id *cm_id = fake_verbs_last_id();
	assert_non_null(cm_id);
	assert_non_null(cm_id->qp);
	if (id != NULL)
		*id = cm_id;
	return req;
}

struct rpma_conn *fx_conn_active(const struct rpma_conn_cfg *cfg, struct rdma_cm_id **id)
{
	struct rdma_cm_id *cm_id = NULL;
	struct rpma_conn_req *req = fx_req_active(cfg, &cm_id);
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_null(req);
	assert_non_null(conn);
	if (id != NULL)
		*id = cm_id;
	return conn;
}

struct rpma_ep *fx_listen(struct rdma_event_channel **evch)
{
	struct rpma_ep *ep = NULL;
	assert_int_equal(rpma_ep_listen(fx_peer, FX_ADDR, FX_PORT, &ep), 0);
	assert_non_null(ep);
	struct rdma_cm_id *id = fake_verbs_last_id();
	assert_non_null(id);
	assert_non_null(id->channel);
	if (evch != NULL)
		*evch = id->channel;
	return ep;
}

void fx_shutdown(struct rpma_ep **ep)
{
	assert_int_equal(rpma_ep_shutdown(ep), 0);
	assert_null(*ep);
}

struct rpma_conn_req *fx_req_passive(struct rpma_ep *ep, struct rdma_event_channel *evch,
				     const struct rpma_conn_cfg *cfg, const void *pdata,
				     uint8_t len, struct rdma_cm_id **id)
{
	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, pdata, len);
	struct rdma_cm_id *cm_id = fake_verbs_last_id();
	assert_non_null(cm_id);

	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, cfg, &req), 0);
	assert_non_null(req);
	/* no queue pair before the application consents to one */
	assert_null(cm_id->qp);
	if (id != NULL)
		*id = cm_id;
	return req;
}

struct rpma_conn *fx_conn_passive(struct rpma_ep *ep, struct rdma_event_channel *evch,
				  const struct rpma_conn_cfg *cfg, const void *pdata, uint8_t len,
				  struct rdma_cm_id **id)
{
	struct rpma_conn_req *req = fx_req_passive(ep, evch, cfg, pdata, len, id);
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_null(req);
	assert_non_null(conn);
	return conn;
}

void fx_conn_delete(struct rpma_conn **conn)
{
	assert_int_equal(rpma_conn_delete(conn), 0);
	assert_null(*conn);
}

struct rdma_event_channel *fx_conn_channel(struct rdma_cm_id *id)
{
	assert_non_null(id);
	assert_non_null(id->channel);
	return id->channel;
}

bool fx_fd_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ready = poll(&pfd, 1, 0);
	assert_true(ready >= 0);
	return ready == 1 && (pfd.revents & POLLIN);
}

struct rpma_mr_local *fx_mr(void *buf, size_t size, int usage)
{
	struct rpma_mr_local *mr = NULL;
	assert_int_equal(rpma_mr_reg(fx_peer, buf, size, usage, &mr), 0);
	assert_non_null(mr);
	return mr;
}

void fx_mr_dereg(struct rpma_mr_local **mr)
{
	assert_int_equal(rpma_mr_dereg(mr), 0);
	assert_null(*mr);
}

uint32_t fx_mr_rkey(const struct rpma_mr_local *mr)
{
	size_t size = 0;
	assert_int_equal(rpma_mr_get_descriptor_size(mr, &size), 0);
	assert_true(size >= 21);
	uint8_t *desc = calloc(1, size);
	assert_non_null(desc);
	assert_int_equal(rpma_mr_get_descriptor(mr, desc), 0);
	uint32_t rkey = (uint32_t)desc[16] | (uint32_t)desc[17] << 8 | (uint32_t)desc[18] << 16 |
			(uint32_t)desc[19] << 24;
	free(desc);
	return rkey;
}

uint32_t fx_lkey_of(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	for (unsigned i = fake_verbs_reg_mrs(); i > 0; i--) {
		const struct fake_reg_mr_record *r = fake_verbs_reg_mr(i - 1);
		uintptr_t start = (uintptr_t)r->addr;
		if (r->mr == NULL || a < start || a - start > r->length ||
		    len > r->length - (a - start))
			continue;
		return r->lkey;
	}
	fail_msg("no registration covers %zu bytes at %p", len, addr);
	return 0;
}

struct rpma_mr_remote *fx_mr_remote(uint64_t addr, uint64_t len, uint32_t rkey, uint8_t usage)
{
	uint8_t desc[21];
	for (int i = 0; i < 8; i++) {
		desc[i] = (uint8_t)(addr >> (8 * i));
		desc[8 + i] = (uint8_t)(len >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		desc[16 + i] = (uint8_t)(rkey >> (8 * i));
	desc[20] = usage;

	struct rpma_mr_remote *mr = NULL;
	assert_int_equal(rpma_mr_remote_from_descriptor(desc, sizeof(desc), &mr), 0);
	assert_non_null(mr);
	return mr;
}

void fx_mr_remote_delete(struct rpma_mr_remote **mr)
{
	assert_int_equal(rpma_mr_remote_delete(mr), 0);
	assert_null(*mr);
}

struct ibv_wc fx_wc(uint64_t wr_id, enum ibv_wc_opcode opcode, enum ibv_wc_status status)
{
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.opcode = opcode;
	wc.status = status;
	return wc;
}

/* the count a snapshot of calls compares with: every thread's, or the caller's */
static unsigned calls_now(const struct fx_calls *calls, enum fake_call call)
{
	return calls->this_thread ? fake_verbs_thread_calls(call) : fake_verbs_calls(call);
}

static void snap(struct fx_calls *calls, bool this_thread)
{
	calls->this_thread = this_thread;
	for (int c = 0; c < FAKE_CALL_MAX; c++)
		calls->n[c] = calls_now(calls, (enum fake_call)c);
}

void fx_calls_snap(struct fx_calls *calls)
{
	snap(calls, false);
}

void fx_thread_calls_snap(struct fx_calls *calls)
{
	snap(calls, true);
}

unsigned fx_calls_since(const struct fx_calls *calls, enum fake_call call)
{
	return calls_now(calls, call) - calls->n[call];
}

void fx_assert_no_calls(const struct fx_calls *calls)
{
	for (int c = 0; c < FAKE_CALL_MAX; c++) {
		unsigned made = fx_calls_since(calls, (enum fake_call)c);
		if (made != 0)
			fail_msg("%u unexpected call(s) of %s", made,
				 fx_call_name((enum fake_call)c));
	}
}

const char *fx_call_name(enum fake_call call)
{
	static const char *const names[FAKE_CALL_MAX] = {
		[FAKE_QUERY_DEVICE_EX] = "query_device_ex",
		[FAKE_ALLOC_PD] = "alloc_pd",
		[FAKE_DEALLOC_PD] = "dealloc_pd",
		[FAKE_REG_MR] = "reg_mr",
		[FAKE_DEREG_MR] = "dereg_mr",
		[FAKE_ADVISE_MR] = "advise_mr",
		[FAKE_CREATE_COMP_CHANNEL] = "create_comp_channel",
		[FAKE_DESTROY_COMP_CHANNEL] = "destroy_comp_channel",
		[FAKE_CREATE_CQ] = "create_cq",
		[FAKE_DESTROY_CQ] = "destroy_cq",
		[FAKE_REQ_NOTIFY_CQ] = "req_notify_cq",
		[FAKE_GET_CQ_EVENT] = "get_cq_event",
		[FAKE_ACK_CQ_EVENTS] = "ack_cq_events",
		[FAKE_POLL_CQ] = "poll_cq",
		[FAKE_CREATE_SRQ] = "create_srq",
		[FAKE_DESTROY_SRQ] = "destroy_srq",
		[FAKE_POST_SEND] = "post_send",
		[FAKE_POST_RECV] = "post_recv",
		[FAKE_POST_SRQ_RECV] = "post_srq_recv",
		[FAKE_POST_ATOMIC_WRITE] = "post_atomic_write",
		[FAKE_CREATE_EVENT_CHANNEL] = "create_event_channel",
		[FAKE_DESTROY_EVENT_CHANNEL] = "destroy_event_channel",
		[FAKE_CREATE_ID] = "create_id",
		[FAKE_DESTROY_ID] = "destroy_id",
		[FAKE_MIGRATE_ID] = "migrate_id",
		[FAKE_GETADDRINFO] = "getaddrinfo",
		[FAKE_FREEADDRINFO] = "freeaddrinfo",
		[FAKE_BIND_ADDR] = "bind_addr",
		[FAKE_RESOLVE_ADDR] = "resolve_addr",
		[FAKE_RESOLVE_ROUTE] = "resolve_route",
		[FAKE_LISTEN] = "listen",
		[FAKE_GET_CM_EVENT] = "get_cm_event",
		[FAKE_ACK_CM_EVENT] = "ack_cm_event",
		[FAKE_CREATE_QP_EX] = "create_qp_ex",
		[FAKE_DESTROY_QP] = "destroy_qp",
		[FAKE_CONNECT] = "connect",
		[FAKE_ACCEPT] = "accept",
		[FAKE_REJECT] = "reject",
		[FAKE_DISCONNECT] = "disconnect",
		[FAKE_MODIFY_QP_TO_ERROR] = "modify_qp_to_error",
		[FAKE_POST_SEND_EX] = "post_send_ex",
		[FAKE_SET_ACK_TIMEOUT] = "set_ack_timeout",
	};
	if (call < 0 || call >= FAKE_CALL_MAX || names[call] == NULL)
		return "?";
	return names[call];
}

/*
 * Not injection points: calls that release something or cannot fail,
 * rdma_ack_cm_event, whose failure leaves the event with rdma_cm for good
 * (no library can give it back), and setting the ACK timeout, whose
 * failure leaves the kernel's default and fails nothing; their failures
 * have tests of their own.
 */
static bool fx_not_injected(enum fake_call call)
{
	switch (call) {
	case FAKE_ACK_CM_EVENT:
	case FAKE_SET_ACK_TIMEOUT:
	case FAKE_DEALLOC_PD:
	case FAKE_DEREG_MR:
	case FAKE_DESTROY_COMP_CHANNEL:
	case FAKE_DESTROY_CQ:
	case FAKE_ACK_CQ_EVENTS:
	case FAKE_DESTROY_SRQ:
	case FAKE_DESTROY_EVENT_CHANNEL:
	case FAKE_DESTROY_ID:
	case FAKE_FREEADDRINFO:
	case FAKE_DESTROY_QP:
		return true;
	default:
		return false;
	}
}

unsigned fx_each_provider_failure(const struct fx_ctor *ctor, void *arg, int err)
{
	unsigned made[FAKE_CALL_MAX];
	struct fx_calls before;
	unsigned injected = 0;

	/* the successful run: which calls, how many of each */
	fx_release();
	fx_fresh();
	if (ctor->setup != NULL)
		ctor->setup(arg);
	if (ctor->prelude != NULL)
		ctor->prelude(arg);
	fx_calls_snap(&before);
	int ret = ctor->run(arg);
	if (ret != 0)
		fail_msg("the constructor failed with %d without any injected failure", ret);
	for (int c = 0; c < FAKE_CALL_MAX; c++)
		made[c] = fx_calls_since(&before, (enum fake_call)c);
	ctor->cleanup(arg, true);

	for (int c = 0; c < FAKE_CALL_MAX; c++) {
		enum fake_call call = (enum fake_call)c;
		if (fx_not_injected(call))
			continue;
		for (unsigned nth = 1; nth <= made[c]; nth++) {
			fx_release();
			fx_fresh();
			if (ctor->setup != NULL)
				ctor->setup(arg);
			int base = fake_verbs_live_objects();
			if (ctor->prelude != NULL)
				ctor->prelude(arg);

			fake_verbs_fail(call, (int)nth, err);
			ret = ctor->run(arg);
			if (ret != RPMA_E_PROVIDER)
				fail_msg("%s #%u failing: the constructor returned %d, not "
					 "RPMA_E_PROVIDER",
					 fx_call_name(call), nth, ret);
			if (rpma_err_get_provider_error() != err)
				fail_msg("%s #%u failing: provider error %d, not %d",
					 fx_call_name(call), nth, rpma_err_get_provider_error(),
					 err);
			ctor->untouched(arg);
			if (fake_verbs_live_objects() != base)
				fail_msg("%s #%u failing: %d object(s) left behind",
					 fx_call_name(call), nth, fake_verbs_live_objects() - base);
			ctor->cleanup(arg, false);
			if (fake_verbs_misuse() != 0)
				fail_msg("%s #%u failing: rdma-core misused: %s",
					 fx_call_name(call), nth, fake_verbs_last_misuse());
			injected++;
		}
	}

	fx_release();
	fx_fresh();
	return injected;
}

unsigned fx_each_alloc_failure(const struct fx_ctor *ctor, void *arg)
{
	/* the successful run: how many allocations */
	fx_release();
	fx_fresh();
	if (ctor->setup != NULL)
		ctor->setup(arg);
	if (ctor->prelude != NULL)
		ctor->prelude(arg);
	ut_alloc_count();
	int ret = ctor->run(arg);
	unsigned made = ut_alloc_disarm();
	if (ret != 0)
		fail_msg("the constructor failed with %d without any injected failure", ret);
	ctor->cleanup(arg, true);
	if (made == 0)
		fail_msg("the constructor allocated nothing: no failure to inject");

	for (unsigned nth = 1; nth <= made; nth++) {
		fx_release();
		fx_fresh();
		if (ctor->setup != NULL)
			ctor->setup(arg);
		int base_objects = fake_verbs_live_objects();
		unsigned long base_blocks = ut_alloc_live();
		if (ctor->prelude != NULL)
			ctor->prelude(arg);

		ut_alloc_fail_nth(nth);
		ret = ctor->run(arg);
		unsigned attempts = ut_alloc_disarm();
		if (!ut_alloc_failed())
			fail_msg("allocation #%u of %u failing: only %u attempted this time", nth,
				 made, attempts);
		if (ret != RPMA_E_NOMEM)
			fail_msg("allocation #%u of %u failing: the constructor returned %d, not "
				 "RPMA_E_NOMEM",
				 nth, made, ret);
		ctor->untouched(arg);
		if (fake_verbs_live_objects() != base_objects)
			fail_msg("allocation #%u of %u failing: %d rdma-core object(s) left behind",
				 nth, made, fake_verbs_live_objects() - base_objects);
		if (ut_alloc_live() != base_blocks)
			fail_msg("allocation #%u of %u failing: %ld block(s) of memory left behind",
				 nth, made, (long)(ut_alloc_live() - base_blocks));
		ctor->cleanup(arg, false);
		if (fake_verbs_misuse() != 0)
			fail_msg("allocation #%u of %u failing: rdma-core misused: %s", nth, made,
				 fake_verbs_last_misuse());
	}

	fx_release();
	fx_fresh();
	return made;
}
