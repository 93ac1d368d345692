/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw-peer.c -- a peer for the checks: a connection request carrying any
 *               private data, then silence
 *
 * usage: raw-peer <addr> <port> <hex> <seconds> [<hex> <seconds>]...
 *
 * Connects to addr:port with the bytes of <hex> (at most 56, what a
 * connection request carries on RoCE) as the request's private data. When
 * the server accepts, it prints the answer's private data in hex, then says
 * nothing for <seconds> -- it neither writes nor disconnects -- unless the
 * server disconnects first, which it reports with the time it took. That
 * is what a server must survive from a peer that is broken or hostile:
 * requests that are not what it expects, and connections left open.
 *
 * With more than one pair of <hex> and <seconds>, one peer after another,
 * each with its own connection, from one process (in the test VM a process
 * costs more than the connection): each line a peer prints starts with
 * "peer N: " (N from 1), and its last is "peer N: status S", S the status
 * it alone would have exited with.
 *
 * Exit status: 0 accepted (whoever disconnected); 1 turned down or the
 * connection failed; 2 bad usage. With several peers: 0, or 1 when the
 * device could not be opened, 2 bad usage.
 */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librpma.h>

#define REQUEST_MAX 56

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the bytes of a string of hex digits; their number, or -1 */
static int from_hex(const char *hex, unsigned char *buf, size_t size)
{
	size_t len = strlen(hex);

	if (len % 2 || len / 2 > size)
		return -1;
	for (size_t i = 0; i < len / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		buf[i] = (unsigned char)v;
	}
	return (int)(len / 2);
}

/* what a librpma call that returned ret said, the provider's errno included */
static const char *why(int ret)
{
	return ret == RPMA_E_PROVIDER ? strerror(rpma_err_get_provider_error())
				      : rpma_err_2str(ret);
}

/* "peer N: " before each line of a peer of several; nothing for one alone */
static char prefix[32];

/*
 * One peer: a connection request with request[len] as its private data,
 * then silence for seconds once accepted; its exit status.
 */
static int one_peer(struct rpma_peer *peer, const char *addr, const char *port,
		    unsigned char *request, int len, double seconds)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	struct rpma_conn_private_data pdata = { request, (uint8_t)len };
	int status = 1;
	int ret;

	ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (!ret)
		ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (!ret)
		ret = rpma_conn_next_event(conn, &event);
	struct rpma_conn_private_data answer;

	if (ret || event != RPMA_CONN_ESTABLISHED) {
		/* iWARP says no with ECONNREFUSED from the connect itself */
		printf("%sraw-peer: turned down: %s", prefix,
		       ret ? why(ret) : rpma_utils_conn_event_2str(event));
		/* what the reject carried (a replica's challenge), when it was not all zeros */
		if (!ret && event == RPMA_CONN_REJECTED &&
		    rpma_conn_get_private_data(conn, &answer) == 0 && answer.ptr &&
		    answer.len >= 4 && memcmp(answer.ptr, "\0\0\0\0", 4) != 0) {
			printf(", the answer: ");
			for (int i = 0; i < answer.len; i++)
				printf("%02x", ((unsigned char *)answer.ptr)[i]);
		}
		printf("\n");
		goto out;
	}

	printf("%sraw-peer: accepted", prefix);
	if (rpma_conn_get_private_data(conn, &answer) == 0 && answer.ptr) {
		printf(", the answer: ");
		for (int i = 0; i < answer.len; i++)
			printf("%02x", ((unsigned char *)answer.ptr)[i]);
	}
	printf("\n");
	fflush(stdout);
	status = 0;

	/* silence: only the server's events are taken */
	double t0 = now_s(), left;
	int fd;

	if (rpma_conn_get_event_fd(conn, &fd))
		goto out;
	while ((left = seconds - (now_s() - t0)) > 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		if (!(pfd.revents & POLLIN))
			continue;
		if (rpma_conn_next_event(conn, &event) == 0 && event != RPMA_CONN_ESTABLISHED) {
			printf("%sraw-peer: the server disconnected after %.1f s (%s)\n", prefix,
			       now_s() - t0, rpma_utils_conn_event_2str(event));
			goto out;
		}
	}
	printf("%sraw-peer: hung up after %.1f s of silence\n", prefix, now_s() - t0);
	if (rpma_conn_disconnect(conn) == 0)
		(void)rpma_conn_next_event(conn, &event);
out:
	fflush(stdout);
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (req)
		(void)rpma_conn_req_delete(&req);
	return status;
}

int main(int argc, char *argv[])
{
	unsigned char request[REQUEST_MAX];
	const int peers = (argc - 3) / 2;
	bool usage = argc < 5 || (argc - 3) % 2;

	/* every pair checked before the first peer goes */
	for (int k = 0; !usage && k < peers; k++) {
		char *end = "";
		usage = from_hex(argv[3 + 2 * k], request, sizeof(request)) < 0 ||
			strtod(argv[4 + 2 * k], &end) < 0 || *end;
	}
	if (usage) {
		fprintf(stderr,
			"usage: %s <addr> <port> <hex> <seconds> [<hex> <seconds>]...\n"
			"  <hex>      the request's private data, at most %d bytes\n"
			"  <seconds>  how long to stay connected and silent\n",
			argv[0], REQUEST_MAX);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;

	int ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		printf("raw-peer: turned down: %s\n", why(ret));
		return 1;
	}
	int status = 0;

	for (int k = 0; k < peers; k++) {
		const int len = from_hex(argv[3 + 2 * k], request, sizeof(request));
		const double seconds = strtod(argv[4 + 2 * k], NULL);

		if (peers > 1)
			snprintf(prefix, sizeof(prefix), "peer %d: ", k + 1);
		status = one_peer(peer, addr, port, request, len, seconds);
		if (peers > 1) {
			printf("%sstatus %d\n", prefix, status);
			status = 0;
		}
	}
	fflush(stdout);
	(void)rpma_peer_delete(&peer);
	return status;
}
