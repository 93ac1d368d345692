// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_peer.c -- rpma_peer_new and rpma_peer_delete
 */

#include <errno.h>

#include "unit_common.h"

static struct rpma_peer *new_peer(void)
{
	struct rpma_peer *peer = NULL;
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &peer), 0);
	assert_non_null(peer);
	return peer;
}

static void peer_new_null_ctx(void **state)
{
	(void)state;
	struct rpma_peer *peer = UT_POISON;
	assert_int_equal(rpma_peer_new(NULL, &peer), RPMA_E_INVAL);
	assert_ptr_equal(peer, UT_POISON);
	assert_int_equal(fake_verbs_live_objects(), 0);
	assert_int_equal(fake_verbs_calls(FAKE_QUERY_DEVICE_EX), 0);
	assert_int_equal(fake_verbs_calls(FAKE_ALLOC_PD), 0);
}

static void peer_new_null_ptr(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_new(fake_verbs_context(), NULL), RPMA_E_INVAL);
	assert_int_equal(fake_verbs_live_objects(), 0);
	assert_int_equal(fake_verbs_calls(FAKE_ALLOC_PD), 0);
}

static void peer_new_null_both(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_new(NULL, NULL), RPMA_E_INVAL);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

/* one device, one protection domain, its capabilities probed */
static void peer_new_success(void **state)
{
	(void)state;
	struct rpma_peer *peer = new_peer();
	assert_int_equal(fake_verbs_calls(FAKE_ALLOC_PD), 1);
	assert_true(fake_verbs_calls(FAKE_QUERY_DEVICE_EX) >= 1);
	assert_int_equal(fake_verbs_live_objects(), 1);
	assert_int_equal(rpma_peer_delete(&peer), 0);
	assert_null(peer);
	assert_int_equal(fake_verbs_calls(FAKE_DEALLOC_PD), 1);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void peer_new_two_peers(void **state)
{
	(void)state;
	struct rpma_peer *a = new_peer();
	struct rpma_peer *b = new_peer();
	assert_ptr_not_equal(a, b);
	assert_int_equal(fake_verbs_live_objects(), 2);
	assert_int_equal(rpma_peer_delete(&a), 0);
	assert_int_equal(fake_verbs_live_objects(), 1);
	assert_int_equal(rpma_peer_delete(&b), 0);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void peer_new_query_fails(void **state)
{
	(void)state;
	struct rpma_peer *peer = UT_POISON;
	fake_verbs_fail(FAKE_QUERY_DEVICE_EX, 1, ENODEV);
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &peer), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENODEV);
	assert_ptr_equal(peer, UT_POISON);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void peer_new_alloc_pd_fails(void **state)
{
	(void)state;
	struct rpma_peer *peer = UT_POISON;
	fake_verbs_fail(FAKE_ALLOC_PD, 1, EACCES);
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &peer), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EACCES);
	assert_ptr_equal(peer, UT_POISON);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

/* a failure leaves nothing behind: the next attempt starts clean */
static void peer_new_after_failure(void **state)
{
	(void)state;
	struct rpma_peer *peer = UT_POISON;
	fake_verbs_fail(FAKE_ALLOC_PD, 1, EAGAIN);
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &peer), RPMA_E_PROVIDER);
	peer = new_peer();
	assert_int_equal(fake_verbs_live_objects(), 1);
	assert_int_equal(rpma_peer_delete(&peer), 0);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

/*
 * delete
 */

static void peer_delete_null_ptr(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_delete(NULL), RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_DEALLOC_PD), 0);
}

static void peer_delete_null_peer(void **state)
{
	(void)state;
	struct rpma_peer *peer = NULL;
	assert_int_equal(rpma_peer_delete(&peer), 0);
	assert_null(peer);
	assert_int_equal(fake_verbs_calls(FAKE_DEALLOC_PD), 0);
}

/*
 * librpma 1.x's code freed the peer and set *peer_ptr to NULL even when
 * ibv_dealloc_pd() failed: the protection domain stays with rdma-core.
 */
static void peer_delete_dealloc_fails(void **state)
{
	(void)state;
	struct rpma_peer *peer = new_peer();
	fake_verbs_fail(FAKE_DEALLOC_PD, 1, EIO);
	assert_int_equal(rpma_peer_delete(&peer), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EIO);
	assert_null(peer);
	assert_int_equal(fake_verbs_live_objects(), 1);
	/* nothing is left to delete */
	assert_int_equal(rpma_peer_delete(&peer), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DEALLOC_PD), 1);
}

/* a region still registered keeps the protection domain busy (EBUSY) */
static void peer_delete_with_region(void **state)
{
	(void)state;
	struct rpma_peer *peer = new_peer();
	static char buf[64];
	struct rpma_mr_local *mr = NULL;
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr), 0);
	assert_int_equal(rpma_peer_delete(&peer), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EBUSY);
	assert_null(peer);
	/* the region is still usable and can still be deregistered */
	size_t size = 0;
	assert_int_equal(rpma_mr_get_size(mr, &size), 0);
	assert_int_equal(size, sizeof(buf));
	assert_int_equal(rpma_mr_dereg(&mr), 0);
	/* the domain rdma-core refused to release is left to it */
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/*
 * capabilities: what the peer probed shows in how it registers memory
 */

/* ODP seen by rpma_peer_new: a refused registration is retried on demand */
static void peer_probes_odp(void **state)
{
	(void)state;
	fake_verbs_set_odp(true);
	struct rpma_peer *peer = new_peer();
	static char buf[64];
	struct rpma_mr_local *mr = NULL;
	fake_verbs_fail(FAKE_REG_MR, 1, EOPNOTSUPP);
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr), 0);
	assert_int_equal(fake_verbs_reg_mrs(), 2);
	assert_true(fake_verbs_reg_mr(1)->access & IBV_ACCESS_ON_DEMAND);
	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* the capabilities are the device's when the peer was made */
static void peer_probes_at_creation(void **state)
{
	(void)state;
	struct rpma_peer *peer = new_peer(); /* no ODP */
	fake_verbs_set_odp(true);	     /* too late for this peer */
	static char buf[64];
	struct rpma_mr_local *mr = UT_POISON;
	fake_verbs_fail(FAKE_REG_MR, 1, EOPNOTSUPP);
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
			 RPMA_E_PROVIDER);
	assert_ptr_equal(mr, UT_POISON);
	assert_int_equal(fake_verbs_reg_mrs(), 1);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* iWARP seen by rpma_peer_new: a read destination gets remote write */
static void peer_probes_iwarp(void **state)
{
	(void)state;
	fake_verbs_set_iwarp(true);
	struct rpma_peer *peer = new_peer();
	static char buf[64];
	struct rpma_mr_local *mr = NULL;
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_DST, &mr), 0);
	assert_true(fake_verbs_reg_mr(0)->access & IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* the regions of a peer are registered in its own protection domain */
static void peer_regions_use_its_pd(void **state)
{
	(void)state;
	struct rpma_peer *a = new_peer();
	struct rpma_peer *b = new_peer();
	static char buf[64];
	struct rpma_mr_local *ma = NULL, *mb = NULL;
	assert_int_equal(rpma_mr_reg(a, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &ma), 0);
	assert_int_equal(rpma_mr_reg(b, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mb), 0);
	struct ibv_pd *pa = fake_verbs_reg_mr(0)->pd;
	struct ibv_pd *pb = fake_verbs_reg_mr(1)->pd;
	assert_non_null(pa);
	assert_non_null(pb);
	assert_ptr_not_equal(pa, pb);
	assert_ptr_equal(pa->context, fake_verbs_context());
	/* b's domain is busy with mb, a's is not any more once ma is gone */
	assert_int_equal(rpma_mr_dereg(&ma), 0);
	assert_int_equal(rpma_peer_delete(&a), 0);
	assert_int_equal(rpma_peer_delete(&b), RPMA_E_PROVIDER);
	assert_null(b);
	assert_int_equal(rpma_mr_dereg(&mb), 0);
	/* only b's domain, which rdma-core refused to release, is left */
	assert_int_equal(fake_verbs_live_objects(), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(peer_new_null_ctx),	    UT_TEST(peer_new_null_ptr),
		UT_TEST(peer_new_null_both),	    UT_TEST(peer_new_success),
		UT_TEST(peer_new_two_peers),	    UT_TEST(peer_new_query_fails),
		UT_TEST(peer_new_alloc_pd_fails),   UT_TEST(peer_new_after_failure),
		UT_TEST(peer_delete_null_ptr),	    UT_TEST(peer_delete_null_peer),
		UT_TEST(peer_delete_dealloc_fails), UT_TEST(peer_delete_with_region),
		UT_TEST(peer_probes_odp),	    UT_TEST(peer_probes_at_creation),
		UT_TEST(peer_probes_iwarp),	    UT_TEST(peer_regions_use_its_pd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
