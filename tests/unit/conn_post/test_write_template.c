/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_write_template.c -- rpma_write_template_*: checked once, then each
 * post's writes and their flush as one chain with one doorbell; every
 * range checked before anything is posted; the flush by the method
 * rpma_flush() would use, its slot given back when the post fails
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fixture.h"
#include "versioned.h"

#define RADDR 0x7f0000400000ULL
#define RLEN  65536
#define RKEY  0x7e37U
#define LLEN  8192

static char lbuf[LLEN];
static int ctx[4];

static struct rpma_conn *conn;
static struct rdma_cm_id *id;
static struct rpma_mr_local *mr;
static struct rpma_mr_remote *rmr;
static struct rpma_write_template *tmpl;

static int wt_setup(void **state)
{
	fx_setup(state);
	conn = fx_conn_active(NULL, &id);
	mr = fx_mr(lbuf, LLEN, RPMA_MR_USAGE_WRITE_SRC);
	rmr = fx_mr_remote(RADDR, RLEN, RKEY,
			   RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
			       RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			       RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	tmpl = NULL;
	assert_int_equal(rpma_write_template_new(conn, rmr, mr, RPMA_FLUSH_TYPE_VISIBILITY, &tmpl),
			 0);
	assert_non_null(tmpl);
	return 0;
}

static int wt_teardown(void **state)
{
	assert_int_equal(rpma_write_template_delete(&tmpl), 0);
	assert_null(tmpl);
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&mr);
	fx_conn_delete(&conn);
	return fx_teardown(state);
}

static struct rpma_write_range range(size_t dst_offset, size_t src_offset, size_t len)
{
	struct rpma_write_range w = { dst_offset, src_offset, len };
	return w;
}

/* the completion of the send record at index: the flush's, with ctx, once */
static void complete_flush(unsigned index, const void *expected_ctx)
{
	const struct fake_send_record *r = fake_verbs_send(index);
	struct ibv_wc wc = fx_wc(r->wr.wr_id, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
	wc.qp_num = id->qp->qp_num;
	fake_verbs_push_wc(id->qp->send_cq, &wc);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_get_completion(cq, &cmpl), 0);
	assert_int_equal(cmpl.op, RPMA_OP_FLUSH);
	assert_ptr_equal(cmpl.op_context, expected_ctx);
	assert_int_equal(rpma_cq_get_completion(cq, &cmpl), RPMA_E_NO_COMPLETION);
}

static void new__refused(void **state)
{
	(void)state;
	struct rpma_write_template *t = (struct rpma_write_template *)&ctx[0];
	FX_INVAL(rpma_write_template_new(NULL, rmr, mr, RPMA_FLUSH_TYPE_VISIBILITY, &t));
	FX_INVAL(rpma_write_template_new(conn, NULL, mr, RPMA_FLUSH_TYPE_VISIBILITY, &t));
	FX_INVAL(rpma_write_template_new(conn, rmr, NULL, RPMA_FLUSH_TYPE_VISIBILITY, &t));
	FX_INVAL(rpma_write_template_new(conn, rmr, mr, (enum rpma_flush_type)2, &t));
	FX_INVAL(rpma_write_template_new(conn, rmr, mr, RPMA_FLUSH_TYPE_VISIBILITY, NULL));
	/* nothing handed out */
	assert_ptr_equal(t, (struct rpma_write_template *)&ctx[0]);
	FX_INVAL(rpma_write_template_delete(NULL));
	struct rpma_write_template *none = NULL;
	assert_int_equal(rpma_write_template_delete(&none), 0);
}

/* a connection whose CQ is the GPSPM thread's carries nothing of the application's */
static void new__gpspm_thread_refused(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(RPMA_GPSPM_THREAD, 4);
	struct rpma_conn *served = fx_conn_active(cfg, NULL);
	fx_cfg_delete(&cfg);
	struct rpma_write_template *t = NULL;
	/*
	 * Not FX_INVAL(), which asserts that no verbs call is made meanwhile:
	 * the connection's thread polls its CQ when it likes. Nothing made,
	 * nothing posted.
	 */
	const int live = fake_verbs_live_objects();
	const unsigned posts = fake_verbs_calls(FAKE_POST_SEND);
	assert_int_equal(rpma_write_template_new(served, rmr, mr, RPMA_FLUSH_TYPE_VISIBILITY, &t),
			 RPMA_E_INVAL);
	assert_null(t);
	assert_int_equal(fake_verbs_live_objects(), live);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), posts);
	fx_conn_delete(&served);
}

static void post__args(void **state)
{
	(void)state;
	struct rpma_write_range w[RPMA_BATCH_MAX];
	for (int i = 0; i < RPMA_BATCH_MAX; i++)
		w[i] = range(0, 0, 8);
	FX_INVAL(rpma_write_template_post(NULL, w, 1, RPMA_F_COMPLETION_ALWAYS, NULL));
	FX_INVAL(rpma_write_template_post(tmpl, NULL, 1, RPMA_F_COMPLETION_ALWAYS, NULL));
	FX_INVAL(rpma_write_template_post(tmpl, w, 0, RPMA_F_COMPLETION_ALWAYS, NULL));
	/* room for the flush: at most RPMA_BATCH_MAX - 1 writes */
	FX_INVAL(rpma_write_template_post(tmpl, w, RPMA_BATCH_MAX, RPMA_F_COMPLETION_ALWAYS, NULL));
	FX_INVAL(rpma_write_template_post(tmpl, w, 1, 0, NULL));
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 0);
}

/* a range that does not fit either region: nothing posted, no slot kept, said once */
static void post__ranges_checked_first(void **state)
{
	(void)state;
	const struct rpma_write_range bad[] = {
		range(0, LLEN - 8, 16),	    /* past the source */
		range(RLEN - 8, 0, 16),	    /* past the destination */
		range(SIZE_MAX - 4, 0, 16), /* wraps around */
		range(0, SIZE_MAX - 4, 16), /* wraps around */
		range(RLEN + 1, 0, 0),	    /* an empty write past the end */
		range(0, 0, LLEN + 1),	    /* longer than the source */
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct rpma_write_range w[3] = { range(0, 0, 64), range(64, 64, 64), bad[k] };
		const unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
		assert_int_equal(
		    rpma_write_template_post(tmpl, w, 3, RPMA_F_COMPLETION_ALWAYS, &ctx[0]),
		    RPMA_E_INVAL);
		assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), errors + 1);
	}
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 0);
	/* no slot was taken: the next post's flush is the only completion */
	struct rpma_write_range ok = range(0, 0, 64);
	assert_int_equal(rpma_write_template_post(tmpl, &ok, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[1]),
			 0);
	complete_flush(1, &ctx[1]);
}

/* the writes as given, unsignaled, then a signaled read inside the covering range */
static void post__one_doorbell(void **state)
{
	(void)state;
	const struct rpma_write_range w[3] = { range(4096, 0, 100), range(1024, 512, 64),
					       range(8192, 4096, 4096) };
	assert_int_equal(rpma_write_template_post(tmpl, w, 3, RPMA_F_COMPLETION_ALWAYS, &ctx[2]),
			 0);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 1);
	assert_int_equal(fake_verbs_sends(), 4);
	for (int i = 0; i < 3; i++) {
		const struct fake_send_record *r = fake_verbs_send((unsigned)i);
		assert_ptr_equal(r->qp, id->qp);
		assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE);
		assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR + w[i].dst_offset);
		assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
		assert_int_equal(r->wr.num_sge, 1);
		assert_int_equal(r->sge[0].addr, (uintptr_t)(lbuf + w[i].src_offset));
		assert_int_equal(r->sge[0].length, w[i].len);
		assert_false(r->wr.send_flags & IBV_SEND_SIGNALED);
		/* a failed write comes back with the post's context */
		assert_ptr_equal((void *)(uintptr_t)r->wr.wr_id, &ctx[2]);
	}
	const struct fake_send_record *f = fake_verbs_send(3);
	assert_int_equal(f->wr.opcode, IBV_WR_RDMA_READ);
	assert_true(f->wr.send_flags & IBV_SEND_SIGNALED);
	assert_int_equal(f->wr.wr.rdma.rkey, RKEY);
	/* from the lowest offset to the highest end among the writes */
	assert_true(f->wr.wr.rdma.remote_addr >= RADDR + 1024);
	assert_true(f->wr.wr.rdma.remote_addr + f->sge[0].length <= RADDR + 8192 + 4096);
	complete_flush(3, &ctx[2]);
	/* the source's key, as rpma_write() gives it */
	assert_int_equal(rpma_write(conn, rmr, 0, mr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fake_verbs_send((unsigned)i)->sge[0].lkey,
				 fake_verbs_send(4)->sge[0].lkey);
}

static void post__full_and_empty_writes(void **state)
{
	(void)state;
	struct rpma_write_range w[RPMA_BATCH_MAX - 1];
	for (int i = 0; i < RPMA_BATCH_MAX - 1; i++)
		w[i] = range((size_t)i * 64, 0, i % 2 ? 64 : 0);
	assert_int_equal(rpma_write_template_post(tmpl, w, RPMA_BATCH_MAX - 1,
						  RPMA_F_COMPLETION_ALWAYS, &ctx[3]),
			 0);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 1);
	assert_int_equal(fake_verbs_sends(), RPMA_BATCH_MAX);
	/* an empty write names no memory */
	assert_int_equal(fake_verbs_send(0)->wr.num_sge, 0);
	assert_int_equal(fake_verbs_send(1)->wr.num_sge, 1);
	complete_flush(RPMA_BATCH_MAX - 1, &ctx[3]);
}

/*
 * A persistent flush needs a method: none until the target declares direct
 * write to PMem; once its peer configuration is applied, the template (made
 * before) posts by read-after-write.
 */
static void post__method_of_the_moment(void **state)
{
	(void)state;
	struct rpma_write_template *pers = NULL;
	assert_int_equal(rpma_write_template_new(conn, rmr, mr, RPMA_FLUSH_TYPE_PERSISTENT, &pers),
			 0);
	struct rpma_write_range w = range(0, 0, 64);
	const unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	assert_int_equal(rpma_write_template_post(pers, &w, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[0]),
			 RPMA_E_NOSUPP);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 0);

	vd_apply_target(conn, true, 0);
	assert_int_equal(rpma_write_template_post(pers, &w, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[0]),
			 0);
	assert_int_equal(fake_verbs_send(1)->wr.opcode, IBV_WR_RDMA_READ);
	complete_flush(1, &ctx[0]);
	assert_int_equal(rpma_write_template_delete(&pers), 0);
}

/* a flush that completes only on error: the same chain, the read unsignaled */
static void post__flush_on_error_only(void **state)
{
	(void)state;
	struct rpma_write_range w = range(128, 0, 64);
	assert_int_equal(rpma_write_template_post(tmpl, &w, 1, RPMA_F_COMPLETION_ON_ERROR, &ctx[1]),
			 0);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 1);
	assert_int_equal(fake_verbs_sends(), 2);
	assert_int_equal(fake_verbs_send(1)->wr.opcode, IBV_WR_RDMA_READ);
	assert_false(fake_verbs_send(1)->wr.send_flags & IBV_SEND_SIGNALED);
}

/* the provider refuses the post: RPMA_E_PROVIDER with its errno, the slot given back */
static void post__provider_failure(void **state)
{
	(void)state;
	struct rpma_write_range w = range(0, 0, 64);
	struct rpma_write_range many[17];
	for (int i = 0; i < 17; i++)
		many[i] = w;
	/* one write (the template's chain), and more than it holds (the stack's) */
	for (int i = 0; i < 600; i++) {
		fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
		assert_int_equal(rpma_write_template_post(tmpl, i % 2 ? many : &w, i % 2 ? 17 : 1,
							  RPMA_F_COMPLETION_ALWAYS, &ctx[0]),
				 RPMA_E_PROVIDER);
		assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	}
	/* more failures than there are slots, and a post still gets one */
	const unsigned before = fake_verbs_sends();
	assert_int_equal(rpma_write_template_post(tmpl, &w, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[1]),
			 0);
	complete_flush(before + 1, &ctx[1]);
}

/* the write and the read-after-write flush of a post of one write, as posted */
static void assert_one_write_chain(unsigned index, const struct rpma_write_range *w,
				   const void *expected_ctx)
{
	const struct fake_send_record *r = fake_verbs_send(index);
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR + w->dst_offset);
	assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(r->wr.num_sge, w->len ? 1 : 0);
	if (w->len) {
		assert_int_equal(r->sge[0].addr, (uintptr_t)(lbuf + w->src_offset));
		assert_int_equal(r->sge[0].length, w->len);
	}
	assert_false(r->wr.send_flags & IBV_SEND_SIGNALED);
	assert_ptr_equal((void *)(uintptr_t)r->wr.wr_id, expected_ctx);
	const struct fake_send_record *f = fake_verbs_send(index + 1);
	assert_int_equal(f->wr.opcode, IBV_WR_RDMA_READ);
	assert_true(f->wr.send_flags & IBV_SEND_SIGNALED);
	assert_int_equal(f->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(f->wr.num_sge, 1);
	assert_true(f->sge[0].length >= 1 && f->sge[0].length <= 8);
	assert_true(f->wr.wr.rdma.remote_addr >= RADDR);
	assert_true(f->wr.wr.rdma.remote_addr + f->sge[0].length <= RADDR + RLEN);
	if (w->len) {
		/* inside the write's range */
		assert_true(f->wr.wr.rdma.remote_addr >= RADDR + w->dst_offset);
		assert_true(f->wr.wr.rdma.remote_addr + f->sge[0].length <=
			    RADDR + w->dst_offset + w->len);
	}
}

static struct rpma_write_range interrupting_write[2];
static int interrupting_count;

/* another thread's post, in the middle of the test's (fake_verbs_before_next_post_send) */
static void post_in_between(void *arg)
{
	(void)arg;
	assert_int_equal(rpma_write_template_post(tmpl, interrupting_write, interrupting_count,
						  RPMA_F_COMPLETION_ALWAYS, &ctx[1]),
			 0);
}

/*
 * A post whose template's chain another post holds builds its own: a post
 * starts while one is being posted, and each is posted whole, as it was
 * asked, each with its own flush.
 */
static void post__chain_held_by_another_post(void **state)
{
	(void)state;
	const struct rpma_write_range w = range(4096, 0, 100);
	interrupting_write[0] = range(1024, 512, 32);
	interrupting_count = 1;
	fake_verbs_before_next_post_send(post_in_between, NULL);
	assert_int_equal(rpma_write_template_post(tmpl, &w, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[0]),
			 0);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 2);
	assert_int_equal(fake_verbs_sends(), 4);
	/* the post in between reached the device first */
	assert_one_write_chain(0, &interrupting_write[0], &ctx[1]);
	assert_one_write_chain(2, &w, &ctx[0]);
	assert_ptr_not_equal(fake_verbs_send(0)->posted_from, fake_verbs_send(2)->posted_from);
	/* two flushes, two slots: each completes once, with its context */
	complete_flush(1, &ctx[1]);
	complete_flush(3, &ctx[0]);

	/* a post of two writes in between, which takes the other path to the chain */
	interrupting_write[1] = range(2048, 0, 16);
	interrupting_count = 2;
	fake_verbs_before_next_post_send(post_in_between, NULL);
	assert_int_equal(rpma_write_template_post(tmpl, &w, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[0]),
			 0);
	assert_int_equal(fake_verbs_sends(), 4 + 5);
	const struct fake_send_record *second = fake_verbs_send(5);
	assert_int_equal(second->wr.wr.rdma.remote_addr, RADDR + 2048);
	assert_int_equal(second->sge[0].length, 16);
	assert_int_equal(fake_verbs_send(6)->wr.opcode, IBV_WR_RDMA_READ);
	assert_one_write_chain(7, &w, &ctx[0]);
	complete_flush(6, &ctx[1]);
	complete_flush(8, &ctx[0]);
}

/*
 * Posts at the edges of the template's own chain: one empty write, whose
 * flush still reads a byte of the region; writes whose first is the
 * highest, whose flush reads inside that first write, not past the range
 * the writes cover.
 */
static void post__chain_edges(void **state)
{
	(void)state;
	const struct rpma_write_range empty = range(RLEN, 0, 0);
	assert_int_equal(
	    rpma_write_template_post(tmpl, &empty, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[0]), 0);
	assert_int_equal(fake_verbs_sends(), 2);
	assert_one_write_chain(0, &empty, &ctx[0]);
	assert_int_equal(fake_verbs_send(1)->wr.wr.rdma.remote_addr, RADDR + RLEN - 1);
	assert_int_equal(fake_verbs_send(1)->sge[0].length, 1);
	complete_flush(1, &ctx[0]);

	const struct rpma_write_range down[2] = { range(192, 0, 64), range(0, 64, 64) };
	assert_int_equal(rpma_write_template_post(tmpl, down, 2, RPMA_F_COMPLETION_ALWAYS, &ctx[1]),
			 0);
	assert_int_equal(fake_verbs_sends(), 5);
	const struct fake_send_record *f = fake_verbs_send(4);
	assert_int_equal(f->wr.opcode, IBV_WR_RDMA_READ);
	assert_true(f->wr.wr.rdma.remote_addr >= RADDR + 192);
	assert_true(f->wr.wr.rdma.remote_addr + f->sge[0].length <= RADDR + 256);
	complete_flush(4, &ctx[1]);
}

/*
 * The template's own chain serves post after post, whatever came between
 * them: a post of more writes, of more than the chain holds, one that
 * completes only on error, a refused range, a provider failure. Each post
 * is as long as it was asked, its flush right behind its writes.
 */
static void post__chain_taken_again(void **state)
{
	(void)state;
	const struct rpma_write_range one = range(256, 128, 64);
	struct rpma_write_range many[RPMA_BATCH_MAX - 1];
	for (int i = 0; i < RPMA_BATCH_MAX - 1; i++)
		many[i] = range((size_t)i * 64, 0, 64);
	const struct rpma_write_range bad[2] = { range(0, 0, 8), range(RLEN, 0, 8) };

	assert_int_equal(rpma_write_template_post(tmpl, &one, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[0]),
			 0);
	const struct ibv_send_wr *own = fake_verbs_send(0)->posted_from;
	assert_one_write_chain(0, &one, &ctx[0]);
	complete_flush(1, &ctx[0]);

	for (int round = 0; round < 6; round++) {
		const unsigned before = fake_verbs_sends();
		switch (round) {
		case 0: /* three writes of the chain: the read after the third */
			assert_int_equal(rpma_write_template_post(
					     tmpl, many, 3, RPMA_F_COMPLETION_ALWAYS, &ctx[2]),
					 0);
			assert_int_equal(fake_verbs_sends(), before + 4);
			assert_int_equal(fake_verbs_send(before + 3)->wr.opcode, IBV_WR_RDMA_READ);
			complete_flush(before + 3, &ctx[2]);
			break;
		case 1: /* every write the chain holds, and more */
			for (int count = 16; count <= 17; count++) {
				const unsigned at = fake_verbs_sends();
				assert_int_equal(rpma_write_template_post(tmpl, many, count,
									  RPMA_F_COMPLETION_ALWAYS,
									  &ctx[2]),
						 0);
				assert_int_equal(fake_verbs_sends(), at + (unsigned)count + 1);
				complete_flush(at + (unsigned)count, &ctx[2]);
			}
			break;
		case 2: /* a flush that completes only on error */
			assert_int_equal(rpma_write_template_post(
					     tmpl, &one, 1, RPMA_F_COMPLETION_ON_ERROR, &ctx[2]),
					 0);
			assert_int_equal(fake_verbs_sends(), before + 2);
			break;
		case 3: /* a range that does not fit, after one that does */
			assert_int_equal(rpma_write_template_post(
					     tmpl, bad, 2, RPMA_F_COMPLETION_ALWAYS, &ctx[2]),
					 RPMA_E_INVAL);
			break;
		case 4: /* the provider fails the post */
			fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
			assert_int_equal(rpma_write_template_post(
					     tmpl, &one, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[2]),
					 RPMA_E_PROVIDER);
			break;
		default: /* an empty write first: the read still reads a byte of the region */
		{
			const struct rpma_write_range empty[2] = { range(RLEN, 0, 0),
								   range(64, 0, 64) };
			assert_int_equal(rpma_write_template_post(
					     tmpl, empty, 2, RPMA_F_COMPLETION_ALWAYS, &ctx[2]),
					 0);
			assert_int_equal(fake_verbs_sends(), before + 3);
			assert_int_equal(fake_verbs_send(before)->wr.num_sge, 0);
			const struct fake_send_record *f = fake_verbs_send(before + 2);
			assert_int_equal(f->wr.wr.rdma.remote_addr, RADDR + RLEN - 1);
			assert_int_equal(f->sge[0].length, 1);
			complete_flush(before + 2, &ctx[2]);
		} break;
		}
		/* and the next post of one write is the template's own chain again */
		const unsigned at = fake_verbs_sends();
		assert_int_equal(
		    rpma_write_template_post(tmpl, &one, 1, RPMA_F_COMPLETION_ALWAYS, &ctx[3]), 0);
		assert_int_equal(fake_verbs_sends(), at + 2);
		assert_ptr_equal(fake_verbs_send(at)->posted_from, own);
		assert_one_write_chain(at, &one, &ctx[3]);
		complete_flush(at + 1, &ctx[3]);
	}
}

/* GPSPM carries the persistent flush: a request for the covering range */
static void post__gpspm(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(RPMA_GPSPM_POLLED, 8);
	struct rdma_cm_id *gid = NULL;
	struct rpma_conn *gconn = fx_conn_active(cfg, &gid);
	fx_cfg_delete(&cfg);
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY,
		  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
		      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
		  VD_RAW | VD_GPSPM);
	struct rpma_mr_remote *grmr = vd_decode_region(d, VD_REGION_SIZE);
	vd_apply_target(gconn, false, 4);
	struct rpma_write_template *t = NULL;
	assert_int_equal(rpma_write_template_new(gconn, grmr, mr, RPMA_FLUSH_TYPE_PERSISTENT, &t),
			 0);
	const unsigned before = fake_verbs_sends();
	const struct rpma_write_range w[2] = { range(256, 0, 64), range(1024, 64, 32) };
	assert_int_equal(rpma_write_template_post(t, w, 2, RPMA_F_COMPLETION_ALWAYS, &ctx[0]), 0);
	assert_int_equal(fake_verbs_sends(), before + 3);
	const struct fake_send_record *r = fake_verbs_send(before + 2);
	assert_int_equal(r->wr.opcode, IBV_WR_SEND);
	const uint8_t *m = r->inline_data;
	assert_int_equal(m[3], 1); /* a request */
	assert_int_equal(vd_get_le(m + 12, 4), RKEY);
	assert_int_equal(vd_get_le(m + 16, 8), RADDR + 256);
	assert_int_equal(vd_get_le(m + 24, 8), 1024 + 32 - 256);
	assert_int_equal(rpma_write_template_delete(&t), 0);
	fx_mr_remote_delete(&grmr);
	fx_conn_delete(&gconn);
}

int main(void)
{
	/* one test a line */
	/* clang-format off */
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, wt_setup, wt_teardown)
		T(new__refused),
		T(new__gpspm_thread_refused),
		T(post__args),
		T(post__ranges_checked_first),
		T(post__one_doorbell),
		T(post__full_and_empty_writes),
		T(post__method_of_the_moment),
		T(post__flush_on_error_only),
		T(post__provider_failure),
		T(post__chain_held_by_another_post),
		T(post__chain_edges),
		T(post__chain_taken_again),
		T(post__gpspm),
#undef T
	};
	/* clang-format on */
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("write_template", tests, NULL, NULL);
}
