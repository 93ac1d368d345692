#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/vm/rxe-fence-fix.py RXE_SOURCE_DIR
#
# Fixes, in place, two faults of soft RoCE's fence (IBV_SEND_FENCE) in
# Debian's kernels (6.1 and 6.12), which setup.sh builds rdma_rxe.ko with:
#
# 1. A fenced work request waits while any read or atomic of the queue pair
#    holds one of its max_rd_atomic credits (rxe_wqe_is_fenced). After a
#    retransmission (rxe's retransmit timer is not stopped when everything
#    is acknowledged, so it also fires for requests sent just before it
#    expires), the requester starts again from the oldest request not
#    acknowledged. When that request is fenced and a read posted after it
#    was sent before the retransmission, the read keeps its credit until
#    its response is taken, which comes only after the fenced request: the
#    queue pair stops for ever, without an error, as nothing is in flight
#    any more to time out. A fence waits for the reads and atomics posted
#    BEFORE the fenced request (InfiniBand 10.8.3.3): those are the ones
#    between the oldest request not completed and this one.
# 2. 6.1 runs the requester and the completer as separate tasks: a
#    completion between the requester's look at the credits and its setting
#    of wait_fence does not wake it. The requester looks again after setting
#    wait_fence, and the completer reads wait_fence after a full barrier.
#
# Found by examples/check/19-replicated-log.sh (a writer's atomic write and
# flush behind a batch's flush): one writer run in 25 stopped on rxe.
# Every edit must find the text it expects; otherwise nothing is written
# and the exit status is 1.

import os
import sys

FENCED_OLD = """\
	return (wqe->wr.send_flags & IB_SEND_FENCE) &&
		atomic_read(&qp->req.rd_atomic) != qp->attr.max_rd_atomic;
}"""

FENCED_NEW = """\
	if (!(wqe->wr.send_flags & IB_SEND_FENCE))
		return 0;

	/* rpma-ng test bed (tests/vm/rxe-fence-fix.py): only the reads and
	 * atomics posted before this request, not those that a retransmission
	 * found already sent after it
	 */
	{
		struct rxe_queue *q = qp->sq.queue;
		unsigned int index;

		for (index = queue_get_consumer(q, QUEUE_TYPE_FROM_CLIENT);
		     index != qp->req.wqe_index;
		     index = queue_next_index(q, index)) {
			struct rxe_send_wqe *prev =
				queue_addr_from_index(q, index);

			if (prev->has_rd_atomic)
				return 1;
		}
	}
	return 0;
}"""

WAIT_OLD = """\
	if (rxe_wqe_is_fenced(qp, wqe)) {
		qp->req.wait_fence = 1;
		goto exit;
	}"""

WAIT_NEW = """\
	if (rxe_wqe_is_fenced(qp, wqe)) {
		qp->req.wait_fence = 1;
		/* rpma-ng test bed: a completion since the look saw no flag */
		smp_mb();
		if (rxe_wqe_is_fenced(qp, wqe))
			goto exit;
		qp->req.wait_fence = 0;
	}"""

WAKE_OLD = """\
	/*
	 * we completed something so let req run again
	 * if it is trying to fence
	 */
	if (qp->req.wait_fence) {"""

WAKE_NEW = """\
	/*
	 * we completed something so let req run again
	 * if it is trying to fence
	 */
	smp_mb(); /* rpma-ng test bed: the consumer index before the flag */
	if (qp->req.wait_fence) {"""

EDITS = {
    "rxe_req.c": [(FENCED_OLD, FENCED_NEW), (WAIT_OLD, WAIT_NEW)],
    "rxe_comp.c": [(WAKE_OLD, WAKE_NEW)],
}


def main():
    if len(sys.argv) != 2:
        print("usage: rxe-fence-fix.py RXE_SOURCE_DIR", file=sys.stderr)
        return 2
    fixed = {}
    for name, edits in EDITS.items():
        path = os.path.join(sys.argv[1], name)
        with open(path) as f:
            text = f.read()
        for old, new in edits:
            if text.count(old) != 1:
                print(f"rxe-fence-fix: {path} does not hold the expected code once:\n{old}",
                      file=sys.stderr)
                return 1
            text = text.replace(old, new)
        fixed[path] = text
    for path, text in fixed.items():
        with open(path, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
