/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_wire.cpp -- GPSPM messages to bytes and back
 */

#include <cstring>

#include "gpspm_wire.hpp"

namespace rpma
{

namespace msg_at = wire::gpspm_msg;

void gpspm_encode_answer(uint8_t *msg, uint32_t slot, uint32_t seq, uint8_t status)
{
	memset(msg, 0, GPSPM_ANSWER_SIZE);
	gpspm_encode_header(msg, GPSPM_ANSWER, slot, seq);
	msg[msg_at::STATUS] = status;
}

gpspm_kind gpspm_decode(const uint8_t *msg, uint32_t len, gpspm_message *m)
{
	*m = gpspm_message{};
	if (len < GPSPM_HEADER_SIZE || wire::get_le16(msg + msg_at::MAGIC) != GPSPM_MAGIC ||
	    msg[msg_at::VERSION] != GPSPM_VERSION)
		return GPSPM_KIND_FOREIGN;
	m->type = msg[msg_at::TYPE];
	m->slot = wire::get_le32(msg + msg_at::SLOT);
	m->seq = wire::get_le32(msg + msg_at::SEQ);
	switch (m->type) {
	case GPSPM_REQUEST:
		if (len < GPSPM_REQUEST_SIZE)
			return GPSPM_KIND_SHORT_REQUEST;
		m->rkey = wire::get_le32(msg + msg_at::RKEY);
		m->raddr = wire::get_le64(msg + msg_at::RADDR);
		m->len = wire::get_le64(msg + msg_at::LEN);
		return GPSPM_KIND_REQUEST;
	case GPSPM_ATOMIC_WRITE:
		if (len < GPSPM_REQUEST_SIZE)
			return GPSPM_KIND_SHORT_REQUEST;
		m->rkey = wire::get_le32(msg + msg_at::RKEY);
		m->raddr = wire::get_le64(msg + msg_at::RADDR);
		memcpy(m->value, msg + msg_at::VALUE, sizeof(m->value));
		return GPSPM_KIND_ATOMIC_WRITE;
	case GPSPM_ANSWER:
		if (len < GPSPM_ANSWER_SIZE)
			return GPSPM_KIND_SHORT_ANSWER;
		m->status = msg[msg_at::STATUS];
		return GPSPM_KIND_ANSWER;
	default:
		return GPSPM_KIND_UNKNOWN_TYPE;
	}
}

ibv_wc_status gpspm_answer_wc_status(uint8_t status)
{
	switch (status) {
	case GPSPM_OK:
		return IBV_WC_SUCCESS;
	case GPSPM_NO_REGION:
	case GPSPM_OUT_OF_RANGE:
	case GPSPM_NOT_WRITABLE:
		return IBV_WC_REM_ACCESS_ERR;
	case GPSPM_FENCED:
		return IBV_WC_REM_OP_ERR;
	default:
		return IBV_WC_REM_INV_REQ_ERR;
	}
}

} /* namespace rpma */
