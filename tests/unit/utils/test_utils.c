// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_utils.c -- rpma_utils_get_ibv_context,
 * rpma_utils_ibv_context_is_odp_capable and rpma_utils_conn_event_2str
 */

#include <errno.h>

#include "unit_common.h"

/*
 * rpma_utils_get_ibv_context
 */

static void get_ctx_null_addr(void **state)
{
	(void)state;
	struct ibv_context *ctx = UT_POISON;
	assert_int_equal(rpma_utils_get_ibv_context(NULL, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
			 RPMA_E_INVAL);
	assert_int_equal(rpma_utils_get_ibv_context(NULL, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx),
			 RPMA_E_INVAL);
	assert_ptr_equal(ctx, UT_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_GETADDRINFO), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_ID), 0);
}

static void get_ctx_null_ptr(void **state)
{
	(void)state;
	assert_int_equal(
	    rpma_utils_get_ibv_context("192.168.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, NULL),
	    RPMA_E_INVAL);
	assert_int_equal(
	    rpma_utils_get_ibv_context("192.168.0.1", RPMA_UTIL_IBV_CONTEXT_REMOTE, NULL),
	    RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_GETADDRINFO), 0);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void get_ctx_bad_type(void **state)
{
	(void)state;
	const int bad[] = { -1, 2, 3, 100, -100 };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++) {
		struct ibv_context *ctx = UT_POISON;
		assert_int_equal(rpma_utils_get_ibv_context(
				     "192.168.0.1", (enum rpma_util_ibv_context_type)bad[i], &ctx),
				 RPMA_E_INVAL);
		assert_ptr_equal(ctx, UT_POISON);
	}
	assert_int_equal(fake_verbs_calls(FAKE_GETADDRINFO), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_ID), 0);
}

/* local: the address is bound, not resolved; a passive lookup */
static void get_ctx_local(void **state)
{
	(void)state;
	struct ibv_context *ctx = NULL;
	assert_int_equal(
	    rpma_utils_get_ibv_context("192.168.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	assert_ptr_equal(ctx, fake_verbs_context());
	assert_string_equal(fake_verbs_last_getaddrinfo_node(), "192.168.0.1");
	assert_true(fake_verbs_last_getaddrinfo_flags() & RAI_PASSIVE);
	assert_int_equal(fake_verbs_calls(FAKE_BIND_ADDR), 1);
	assert_int_equal(fake_verbs_calls(FAKE_RESOLVE_ADDR), 0);
	/* the temporary id and the address are gone, the context stays */
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_int_equal(fake_verbs_calls(FAKE_FREEADDRINFO), 1);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

/* remote: the address is resolved with the default timeout; an active lookup */
static void get_ctx_remote(void **state)
{
	(void)state;
	struct ibv_context *ctx = NULL;
	assert_int_equal(rpma_utils_get_ibv_context("10.0.0.7", RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx),
			 0);
	assert_ptr_equal(ctx, fake_verbs_context());
	assert_string_equal(fake_verbs_last_getaddrinfo_node(), "10.0.0.7");
	assert_false(fake_verbs_last_getaddrinfo_flags() & RAI_PASSIVE);
	assert_int_equal(fake_verbs_calls(FAKE_RESOLVE_ADDR), 1);
	assert_int_equal(fake_verbs_last_timeout(FAKE_RESOLVE_ADDR), RPMA_DEFAULT_TIMEOUT_MS);
	assert_int_equal(fake_verbs_calls(FAKE_BIND_ADDR), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void get_ctx_ipv6(void **state)
{
	(void)state;
	struct ibv_context *ctx = NULL;
	assert_int_equal(rpma_utils_get_ibv_context("fe80::1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
			 0);
	assert_ptr_equal(ctx, fake_verbs_context());
	ctx = NULL;
	assert_int_equal(
	    rpma_utils_get_ibv_context("2001:db8::5", RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx), 0);
	assert_ptr_equal(ctx, fake_verbs_context());
	assert_int_equal(fake_verbs_live_objects(), 0);
}

/* what rdma_getaddrinfo cannot make an address of fails as the provider's error */
static void get_ctx_bad_address(void **state)
{
	(void)state;
	const char *bad[] = { "", "no.such.host.invalid", "300.1.1.1", "::g", "1.2.3.4:5" };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++) {
		struct ibv_context *ctx = UT_POISON;
		assert_int_equal(
		    rpma_utils_get_ibv_context(bad[i], RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx),
		    RPMA_E_PROVIDER);
		assert_ptr_equal(ctx, UT_POISON);
		assert_int_not_equal(rpma_err_get_provider_error(), 0);
	}
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_ID), 0);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void get_ctx_getaddrinfo_fails(void **state)
{
	(void)state;
	struct ibv_context *ctx = UT_POISON;
	fake_verbs_fail(FAKE_GETADDRINFO, 1, ENOMEM);
	assert_int_equal(
	    rpma_utils_get_ibv_context("192.168.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
	    RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	assert_ptr_equal(ctx, UT_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_ID), 0);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void get_ctx_create_id_fails(void **state)
{
	(void)state;
	struct ibv_context *ctx = UT_POISON;
	fake_verbs_fail(FAKE_CREATE_ID, 1, EMFILE);
	assert_int_equal(
	    rpma_utils_get_ibv_context("192.168.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
	    RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EMFILE);
	assert_ptr_equal(ctx, UT_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_FREEADDRINFO), 1);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void get_ctx_bind_fails(void **state)
{
	(void)state;
	struct ibv_context *ctx = UT_POISON;
	fake_verbs_fail(FAKE_BIND_ADDR, 1, EADDRNOTAVAIL);
	assert_int_equal(
	    rpma_utils_get_ibv_context("192.168.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
	    RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EADDRNOTAVAIL);
	assert_ptr_equal(ctx, UT_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void get_ctx_resolve_fails(void **state)
{
	(void)state;
	struct ibv_context *ctx = UT_POISON;
	fake_verbs_fail(FAKE_RESOLVE_ADDR, 1, ETIMEDOUT);
	assert_int_equal(
	    rpma_utils_get_ibv_context("192.168.0.1", RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx),
	    RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ETIMEDOUT);
	assert_ptr_equal(ctx, UT_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

/* a wildcard binds to no device: there is no context to give */
static void get_ctx_wildcard_has_no_device(void **state)
{
	(void)state;
	struct ibv_context *ctx = UT_POISON;
	int ret = rpma_utils_get_ibv_context("0.0.0.0", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
	assert_int_equal(ret, RPMA_E_PROVIDER);
	assert_ptr_equal(ctx, UT_POISON);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

/* the temporary id is synchronous: resolving does not need an event channel */
static void get_ctx_no_event_channel(void **state)
{
	(void)state;
	struct ibv_context *ctx = NULL;
	assert_int_equal(
	    rpma_utils_get_ibv_context("192.168.0.1", RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_EVENT_CHANNEL), 0);
	assert_int_equal(fake_verbs_calls(FAKE_GET_CM_EVENT), 0);
}

/*
 * rpma_utils_ibv_context_is_odp_capable
 */

static void odp_null_ctx(void **state)
{
	(void)state;
	int odp = 42;
	assert_int_equal(rpma_utils_ibv_context_is_odp_capable(NULL, &odp), RPMA_E_INVAL);
	assert_int_equal(odp, 42);
	assert_int_equal(fake_verbs_calls(FAKE_QUERY_DEVICE_EX), 0);
}

static void odp_null_out(void **state)
{
	(void)state;
	assert_int_equal(rpma_utils_ibv_context_is_odp_capable(fake_verbs_context(), NULL),
			 RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_QUERY_DEVICE_EX), 0);
}

static void odp_capable(void **state)
{
	(void)state;
	fake_verbs_set_odp(true);
	int odp = 42;
	assert_int_equal(rpma_utils_ibv_context_is_odp_capable(fake_verbs_context(), &odp), 0);
	assert_int_equal(odp, 1);
	assert_int_equal(fake_verbs_calls(FAKE_QUERY_DEVICE_EX), 1);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

static void odp_not_capable(void **state)
{
	(void)state;
	int odp = 42;
	assert_int_equal(rpma_utils_ibv_context_is_odp_capable(fake_verbs_context(), &odp), 0);
	assert_int_equal(odp, 0);
}

/*
 * A device whose RC transport can fault in pages for some operations only
 * is not ODP capable: a region registered on demand must serve remote
 * reads and writes both (the target's) and local ones (the initiator's).
 */
static void odp_some_operations_only(void **state)
{
	(void)state;
	const uint32_t partial[] = {
		IBV_ODP_SUPPORT_READ,
		IBV_ODP_SUPPORT_WRITE,
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_READ,
	};
	for (size_t i = 0; i < sizeof(partial) / sizeof(partial[0]); i++) {
		fake_verbs_set_odp_rc_caps(partial[i]);
		int odp = 42;
		assert_int_equal(rpma_utils_ibv_context_is_odp_capable(fake_verbs_context(), &odp),
				 0);
		assert_int_equal(odp, 0);
	}
	fake_verbs_set_odp_rc_caps(IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_WRITE);
	int odp = 42;
	assert_int_equal(rpma_utils_ibv_context_is_odp_capable(fake_verbs_context(), &odp), 0);
	assert_int_equal(odp, 1);
}

static void odp_query_fails(void **state)
{
	(void)state;
	fake_verbs_set_odp(true);
	int odp = 42;
	fake_verbs_fail(FAKE_QUERY_DEVICE_EX, 1, EOPNOTSUPP);
	assert_int_equal(rpma_utils_ibv_context_is_odp_capable(fake_verbs_context(), &odp),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EOPNOTSUPP);
	/* and the next query works again */
	assert_int_equal(rpma_utils_ibv_context_is_odp_capable(fake_verbs_context(), &odp), 0);
	assert_int_equal(odp, 1);
}

/*
 * rpma_utils_conn_event_2str: librpma 1.x's strings
 */

static void event_2str_undefined(void **state)
{
	(void)state;
	assert_string_equal(rpma_utils_conn_event_2str(RPMA_CONN_UNDEFINED),
			    "Undefined connection event");
}

static void event_2str_established(void **state)
{
	(void)state;
	assert_string_equal(rpma_utils_conn_event_2str(RPMA_CONN_ESTABLISHED),
			    "Connection established");
}

static void event_2str_closed(void **state)
{
	(void)state;
	assert_string_equal(rpma_utils_conn_event_2str(RPMA_CONN_CLOSED), "Connection closed");
}

static void event_2str_lost(void **state)
{
	(void)state;
	assert_string_equal(rpma_utils_conn_event_2str(RPMA_CONN_LOST), "Connection lost");
}

static void event_2str_rejected(void **state)
{
	(void)state;
	assert_string_equal(rpma_utils_conn_event_2str(RPMA_CONN_REJECTED), "Connection rejected");
}

static void event_2str_unreachable(void **state)
{
	(void)state;
	assert_string_equal(rpma_utils_conn_event_2str(RPMA_CONN_UNREACHABLE),
			    "Connection unreachable");
}

static void event_2str_unknown(void **state)
{
	(void)state;
	const int values[] = { -2, 5, 6, 100, -100000 };
	for (size_t i = 0; i < UT_ARRAY_SIZE(values); i++) {
		const char *s = rpma_utils_conn_event_2str((enum rpma_conn_event)values[i]);
		/* librpma 1.x's text for anything it did not know */
		assert_string_equal(s, "Unsupported connection event");
	}
}

static void event_values(void **state)
{
	(void)state;
	assert_int_equal(RPMA_CONN_UNDEFINED, -1);
	assert_int_equal(RPMA_CONN_ESTABLISHED, 0);
	assert_int_equal(RPMA_CONN_CLOSED, 1);
	assert_int_equal(RPMA_CONN_LOST, 2);
	assert_int_equal(RPMA_CONN_REJECTED, 3);
	assert_int_equal(RPMA_CONN_UNREACHABLE, 4);
	assert_int_equal(RPMA_UTIL_IBV_CONTEXT_LOCAL, 0);
	assert_int_equal(RPMA_UTIL_IBV_CONTEXT_REMOTE, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(get_ctx_null_addr),
		UT_TEST(get_ctx_null_ptr),
		UT_TEST(get_ctx_bad_type),
		UT_TEST(get_ctx_local),
		UT_TEST(get_ctx_remote),
		UT_TEST(get_ctx_ipv6),
		UT_TEST(get_ctx_bad_address),
		UT_TEST(get_ctx_getaddrinfo_fails),
		UT_TEST(get_ctx_create_id_fails),
		UT_TEST(get_ctx_bind_fails),
		UT_TEST(get_ctx_resolve_fails),
		UT_TEST(get_ctx_wildcard_has_no_device),
		UT_TEST(get_ctx_no_event_channel),
		UT_TEST(odp_null_ctx),
		UT_TEST(odp_null_out),
		UT_TEST(odp_capable),
		UT_TEST(odp_not_capable),
		UT_TEST(odp_some_operations_only),
		UT_TEST(odp_query_fails),
		UT_TEST(event_2str_undefined),
		UT_TEST(event_2str_established),
		UT_TEST(event_2str_closed),
		UT_TEST(event_2str_lost),
		UT_TEST(event_2str_rejected),
		UT_TEST(event_2str_unreachable),
		UT_TEST(event_2str_unknown),
		UT_TEST(event_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
