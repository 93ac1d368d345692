/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma.hpp -- a thin, header-only C++ layer over librpma.h
 *
 * Every librpma object that has a delete function gets a move-only owner
 * (rpma::peer, peer_cfg, mr_local, mr_remote, conn_cfg, conn_req, conn, ep,
 * srq, srq_cfg) whose destructor calls that function; a completion queue,
 * which belongs to its connection or shared RQ, gets a non-owning view
 * (rpma::cq).
 *
 * Naming: rpma_<object>_<verb>(obj, args...) is obj.<verb>(args...);
 * rpma_<object>_new is <object>::create (rpma_mr_reg is mr_local::reg,
 * rpma_ep_listen is ep::listen, the *_from_descriptor functions keep their
 * names); a function of no object, rpma_<name>, is rpma::<name>
 * (rpma::utils_get_ibv_context, rpma::log_set_threshold, ...). The C
 * constants that a C++ type replaces keep their names in lower case:
 * RPMA_E_INVAL is rpma::errc::inval, RPMA_MR_USAGE_WRITE_SRC is
 * rpma::usage::write_src, RPMA_F_COMPLETION_ALWAYS is
 * rpma::flag::completion_always, RPMA_FLUSH_TYPE_PERSISTENT is
 * rpma::flush_type::persistent; timeouts are std::chrono durations. The
 * elements of conn.post_batch() (struct rpma_batch_op) are made by
 * rpma::batch::<call>, from the arguments of conn.<call>.
 *
 * Errors: every call that can fail returns rpma::result<T>, a T or an
 * rpma::error (an RPMA_E_* code as a std::error_code). Nothing here throws,
 * except value() of a failure when exceptions are enabled; the header
 * compiles with -fno-exceptions and -fno-rtti. The data path (posting,
 * polling) is inline and allocation-free: each call is the C call plus a
 * test of its return value.
 *
 * Lifetimes: an object that a call keeps using after it returns (the
 * region of an operation in flight, the peer of what is created from it,
 * the shared RQ of a configuration) is taken by lvalue reference, next to
 * a deleted overload taking `const T &&`: passing a temporary does not
 * compile. Likewise a view (a CQ, private data) cannot be taken from a
 * temporary owner, nor a member reached through `->` of a temporary result.
 *
 * Wrapping a C function: one that only returns a code is
 * result<void>::from_code(rpma_x(...)); one that gives a value through its
 * last parameter is detail::fetch<T>(&rpma_x, args...), T being the C++
 * type of that value. A parameter the C side keeps after the call gets a
 * deleted `const T &&` overload. A set of C constants is a scoped enum of
 * their values; if they combine, detail::bitmask<E> gives it the operators.
 *
 * Buffers are rpma::span, one type in every language standard, made from
 * arrays, contiguous containers and std::span (RPMA_HPP_STD_SPAN is
 * defined when the standard library has std::span: rpma::span then
 * converts to and from it).
 *
 * This file includes the parts of the layer, the headers of include/rpma/,
 * in this order: error.hpp (errc, the error category, error, result),
 * constants.hpp (the scoped enums, the timeouts), span.hpp, handle.hpp
 * (unique_handle and the helpers of the objects), then the objects:
 * cq.hpp, peer.hpp (peer_cfg, peer), mr.hpp (mr_local, mr_remote),
 * srq.hpp (srq_cfg, srq), conn.hpp (conn_cfg, batch, conn, conn_req, ep)
 * and utils.hpp (utils_*, log_*). Each of them compiles alone; a program
 * includes this one.
 */

#ifndef RPMA_HPP
#define RPMA_HPP 1

#include <librpma.h>

#include "rpma/error.hpp"
#include "rpma/constants.hpp"
#include "rpma/span.hpp"
#include "rpma/handle.hpp"
#include "rpma/cq.hpp"
#include "rpma/peer.hpp"
#include "rpma/mr.hpp"
#include "rpma/srq.hpp"
#include "rpma/conn.hpp"
#include "rpma/utils.hpp"

#endif /* RPMA_HPP */
