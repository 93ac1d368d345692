/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * header_only.cpp -- rpma.hpp on its own, built with every warning as an
 * error for each language standard (see meson.build)
 *
 * rpma.hpp is included first, on its own; the containers after it are
 * there for the span checks only. Every member function is named in
 * instantiate_everything() so that each template body is compiled under
 * the strict flags; the program runs only the checks that need no device.
 */

#include <rpma.hpp>

#include <array>
#include <string>
#include <vector>

namespace
{

/* ---- what the types promise, checked at compile time ---- */

template <class T> constexpr bool owner_traits()
{
	return !std::is_copy_constructible<T>::value && !std::is_copy_assignable<T>::value &&
	       std::is_nothrow_move_constructible<T>::value &&
	       std::is_nothrow_move_assignable<T>::value &&
	       std::is_nothrow_destructible<T>::value &&
	       std::is_nothrow_default_constructible<T>::value &&
	       !std::is_convertible<typename T::pointer, T>::value && sizeof(T) == sizeof(void *);
}

static_assert(owner_traits<rpma::peer>(), "peer");
static_assert(owner_traits<rpma::peer_cfg>(), "peer_cfg");
static_assert(owner_traits<rpma::mr_local>(), "mr_local");
static_assert(owner_traits<rpma::mr_remote>(), "mr_remote");
static_assert(owner_traits<rpma::conn_cfg>(), "conn_cfg");
static_assert(owner_traits<rpma::conn_req>(), "conn_req");
static_assert(owner_traits<rpma::conn>(), "conn");
static_assert(owner_traits<rpma::ep>(), "ep");
static_assert(owner_traits<rpma::srq>(), "srq");
static_assert(owner_traits<rpma::srq_cfg>(), "srq_cfg");

static_assert(std::is_trivially_copyable<rpma::cq>::value && sizeof(rpma::cq) == sizeof(void *),
	      "a CQ view is a pointer");

static_assert(sizeof(rpma::result<void>) == sizeof(int), "result<void> is the C return value");
static_assert(std::is_trivially_copyable<rpma::result<void>>::value, "result<void>");
static_assert(std::is_trivially_copyable<rpma::result<rpma_completion>>::value,
	      "results of plain values copy as plain values");
static_assert(std::is_trivially_copyable<rpma::result<rpma::cq>>::value, "result<cq>");
static_assert(!std::is_copy_constructible<rpma::result<rpma::conn>>::value,
	      "a result holding an owner is move-only");
static_assert(std::is_nothrow_move_constructible<rpma::result<rpma::conn>>::value, "result<conn>");

static_assert(std::is_error_code_enum<rpma::errc>::value, "errc converts to error_code");

/* an error goes from any result to any other as it is */
static_assert(
    std::is_same<decltype(std::declval<rpma::result<int> &>().error()), rpma::error>::value,
    "error() is an rpma::error");
static_assert(std::is_convertible<rpma::error, rpma::result<rpma::conn>>::value &&
		  std::is_convertible<rpma::error, rpma::result<void>>::value &&
		  std::is_convertible<rpma::error, std::error_code>::value,
	      "an rpma::error makes any result, and is a std::error_code");
static_assert(!std::is_convertible<std::error_code, rpma::result<int>>::value &&
		  !std::is_convertible<std::error_code, rpma::error>::value,
	      "an error_code of another category cannot pass for an rpma error");
static_assert(!std::is_convertible<int, rpma::error>::value, "a C return code is made explicit");

/* `if (r)` is the success, except for a result<bool>: there it would read as the answer */
static_assert(std::is_constructible<bool, rpma::result<int>>::value &&
		  std::is_constructible<bool, rpma::result<void>>::value &&
		  !std::is_convertible<rpma::result<int>, bool>::value,
	      "a result tests as its success");
static_assert(!std::is_constructible<bool, rpma::result<bool>>::value &&
		  !std::is_constructible<bool, const rpma::result<bool> &>::value,
	      "a result<bool> does not test as a bool");

/* value() throws exactly when there are exceptions to throw */
#if defined(__cpp_exceptions)
static_assert(!noexcept(std::declval<rpma::result<int> &>().value()) &&
		  !noexcept(std::declval<rpma::result<void> &>().value()),
	      "value() throws std::system_error");
#else
/* each noexcept() in parentheses: clang-format takes "&& noexcept" for a declarator */
static_assert((noexcept(std::declval<rpma::result<int> &>().value())) &&
		  (noexcept(std::declval<rpma::result<void> &>().value())),
	      "value() aborts");
#endif

/* a temporary result gives its value away, never a pointer or reference into itself */
template <class R, class = void> struct arrow_works : std::false_type {
};
template <class R>
struct arrow_works<R, std::void_t<decltype(std::declval<R>().operator->())>> : std::true_type {
};
static_assert(arrow_works<rpma::result<rpma_completion> &>::value &&
		  arrow_works<const rpma::result<rpma_completion> &>::value,
	      "-> of a named result");
static_assert(!arrow_works<rpma::result<rpma_completion>>::value &&
		  !arrow_works<rpma::result<rpma::conn>>::value,
	      "no -> of a temporary result");
static_assert(
    std::is_same<decltype(*std::declval<rpma::result<rpma::conn>>()), rpma::conn>::value &&
	std::is_same<decltype(std::declval<rpma::result<rpma::conn>>().value()), rpma::conn>::value,
    "* and value() of a temporary result move the value out");
static_assert(static_cast<int>(rpma::errc::no_completion) == RPMA_E_NO_COMPLETION, "values");
static_assert(rpma::errc_name(RPMA_E_NOT_SHARED_CHNL) != nullptr, "names");
static_assert(rpma::errc_name(0) == nullptr, "0 is no RPMA_E_* code");

static_assert(std::is_convertible<rpma::span<std::byte>, rpma::span<const std::byte>>::value,
	      "span<T> -> span<const T>");
static_assert(!std::is_convertible<rpma::span<const std::byte>, rpma::span<std::byte>>::value,
	      "no span<const T> -> span<T>");

/* what a span is made from, implicitly */
template <class From, class T> constexpr bool makes_span()
{
	return std::is_convertible<From, rpma::span<T>>::value;
}
static_assert(makes_span<std::vector<int> &, int>() &&
		  makes_span<std::vector<int> &, const int>() &&
		  makes_span<const std::vector<int> &, const int>() &&
		  makes_span<std::array<int, 4> &, int>() && makes_span<int (&)[4], int>() &&
		  makes_span<std::string &, char>() &&
		  makes_span<const std::string &, const char>() &&
		  makes_span<std::vector<std::byte> &, const std::byte>(),
	      "from contiguous containers and arrays");
static_assert(!makes_span<const std::vector<int> &, int>() &&
		  !makes_span<std::vector<long> &, long long>() &&
		  !makes_span<std::vector<int> &, long>() &&
		  !makes_span<std::vector<char> &, std::byte>() && !makes_span<int *, int>(),
	      "not from const elements, other element types or a bare pointer");
static_assert(!makes_span<std::vector<int>, int>() && makes_span<std::vector<int>, const int>() &&
		  !makes_span<std::string, char>() && makes_span<std::string, const char>(),
	      "a temporary container only for const elements, as std::span");
static_assert(std::is_constructible<rpma::span<int>, int *, std::size_t>::value,
	      "from a pointer and a size, explicitly");

/* one type in every standard: a function that takes one keeps its signature */
static_assert(std::is_class<rpma::span<int>>::value &&
		  sizeof(rpma::span<int>) == 2 * sizeof(void *),
	      "rpma::span is its own class");
#ifdef RPMA_HPP_STD_SPAN
static_assert(!std::is_same<rpma::span<int>, std::span<int>>::value, "not std::span");
static_assert(makes_span<std::span<int>, int>() && makes_span<std::span<int, 3>, int>() &&
		  makes_span<std::span<int>, const int>() &&
		  !makes_span<std::span<const int>, int>(),
	      "from std::span, a temporary one too");
static_assert(std::is_convertible<rpma::span<int>, std::span<int>>::value &&
		  std::is_convertible<rpma::span<int>, std::span<const int>>::value &&
		  std::is_convertible<rpma::span<int> &, std::span<int>>::value &&
		  !std::is_convertible<rpma::span<const int>, std::span<int>>::value,
	      "to std::span");
#endif

/* the C constants as scoped enums, of the same values */
static_assert(!std::is_convertible<rpma::usage, int>::value &&
		  !std::is_convertible<int, rpma::usage>::value &&
		  !std::is_convertible<rpma::flag, int>::value &&
		  !std::is_convertible<rpma::flush_type, rpma_flush_type>::value,
	      "scoped enums");
static_assert(static_cast<int>(rpma::usage::read_src) == RPMA_MR_USAGE_READ_SRC &&
		  static_cast<int>(rpma::usage::read_dst) == RPMA_MR_USAGE_READ_DST &&
		  static_cast<int>(rpma::usage::write_src) == RPMA_MR_USAGE_WRITE_SRC &&
		  static_cast<int>(rpma::usage::write_dst) == RPMA_MR_USAGE_WRITE_DST &&
		  static_cast<int>(rpma::usage::flush_type_visibility) ==
		      RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY &&
		  static_cast<int>(rpma::usage::flush_type_persistent) ==
		      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT &&
		  static_cast<int>(rpma::usage::send) == RPMA_MR_USAGE_SEND &&
		  static_cast<int>(rpma::usage::recv) == RPMA_MR_USAGE_RECV,
	      "usage bits");
static_assert(static_cast<int>(rpma::flag::completion_on_error) == RPMA_F_COMPLETION_ON_ERROR &&
		  static_cast<int>(rpma::flag::completion_always) == RPMA_F_COMPLETION_ALWAYS,
	      "completion flags");
static_assert(static_cast<int>(rpma::flush_type::persistent) == RPMA_FLUSH_TYPE_PERSISTENT &&
		  static_cast<int>(rpma::flush_type::visibility) == RPMA_FLUSH_TYPE_VISIBILITY,
	      "flush types");

/* usage bits combine, at compile time */
constexpr rpma::usage rw = rpma::usage::read_src | rpma::usage::write_dst;
static_assert(static_cast<int>(rw) == (RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST), "|");
static_assert((rw & rpma::usage::write_dst) == rpma::usage::write_dst &&
		  (rw & rpma::usage::send) == rpma::usage{},
	      "&");
static_assert((rw ^ rpma::usage::read_src) == rpma::usage::write_dst, "^");
static_assert((rw & ~rpma::usage::read_src) == rpma::usage::write_dst, "~");
static_assert(rpma::has(rw, rpma::usage::read_src) && rpma::has(rw, rw) &&
		  !rpma::has(rw, rpma::usage::read_src | rpma::usage::send),
	      "has: every bit asked for");
constexpr rpma::usage compound()
{
	rpma::usage u = rpma::usage::send;
	u |= rpma::usage::recv;
	u &= ~rpma::usage::send;
	u ^= rpma::usage::read_dst;
	return u;
}
static_assert(compound() == (rpma::usage::recv | rpma::usage::read_dst), "|=, &=, ^=");

/* only usage bits combine: a completion flag or a flush type is one value */
template <class E, class = void> struct combines : std::false_type {
};
template <class E>
struct combines<E, std::void_t<decltype(std::declval<E>() | std::declval<E>())>> : std::true_type {
};
static_assert(combines<rpma::usage>::value && !combines<rpma::flag>::value &&
		  !combines<rpma::flush_type>::value && !combines<rpma::errc>::value,
	      "bitmask operators only where bits combine");

/* times are durations: a bare number does not say its unit */
static_assert(std::is_same<decltype(std::declval<rpma::conn_cfg &>().get_timeout()),
			   rpma::result<std::chrono::milliseconds>>::value,
	      "get_timeout");
template <class Arg, class = void> struct waits_with : std::false_type {
};
template <class Arg>
struct waits_with<Arg, std::void_t<decltype(std::declval<const rpma::cq &>().wait_completion(
			   std::declval<Arg>()))>> : std::true_type {
};
static_assert(waits_with<std::chrono::milliseconds>::value &&
		  waits_with<std::chrono::seconds>::value && !waits_with<int>::value &&
		  !waits_with<std::chrono::microseconds>::value,
	      "wait_completion takes whole milliseconds or coarser");
static_assert(rpma::default_timeout.count() == RPMA_DEFAULT_TIMEOUT_MS, "default timeout");

/*
 * A call that keeps using an object after it returns takes no temporary;
 * views are not taken from temporary owners. Each pair says: the call
 * compiles with lvalues, and not with the temporary (a deleted overload).
 * compile_fail/ checks the diagnostics of the same mistakes.
 */
template <class T> T &lvalue();
/* name<T>::value: whether the call compiles, T the type of the argument under test */
#define RPMA_CALL(name, ...)                                                                       \
	template <class T, class = void> struct name : std::false_type {                           \
	};                                                                                         \
	template <class T> struct name<T, std::void_t<decltype(__VA_ARGS__)>> : std::true_type {   \
	};
RPMA_CALL(reg_ptr, rpma::mr_local::reg(std::declval<T>(), nullptr, 0, rpma::usage::read_src))
RPMA_CALL(reg_span,
	  rpma::mr_local::reg(std::declval<T>(), rpma::span<std::byte>(), rpma::usage::read_src))
RPMA_CALL(listen, rpma::ep::listen(std::declval<T>(), "", ""))
RPMA_CALL(req_create, rpma::conn_req::create(std::declval<T>(), "", ""))
RPMA_CALL(req_create_cfg,
	  rpma::conn_req::create(std::declval<T>(), "", "", lvalue<const rpma::conn_cfg>()))
RPMA_CALL(srq_create, rpma::srq::create(std::declval<T>()))
RPMA_CALL(srq_create_cfg, rpma::srq::create(std::declval<T>(), lvalue<const rpma::srq_cfg>()))
RPMA_CALL(set_srq, lvalue<rpma::conn_cfg>().set_srq(std::declval<T>()))
RPMA_CALL(read, lvalue<rpma::conn>().read(std::declval<T>(), 0, lvalue<const rpma::mr_remote>(), 0,
					  0, rpma::flag::completion_always))
RPMA_CALL(write, lvalue<rpma::conn>().write(lvalue<const rpma::mr_remote>(), 0, std::declval<T>(),
					    0, 0, rpma::flag::completion_always))
RPMA_CALL(write_with_imm,
	  lvalue<rpma::conn>().write_with_imm(lvalue<const rpma::mr_remote>(), 0, std::declval<T>(),
					      0, 0, rpma::flag::completion_always, 0u))
RPMA_CALL(send, lvalue<rpma::conn>().send(std::declval<T>(), 0, 0, rpma::flag::completion_always))
RPMA_CALL(send_with_imm, lvalue<rpma::conn>().send_with_imm(std::declval<T>(), 0, 0,
							    rpma::flag::completion_always, 0u))
RPMA_CALL(recv, lvalue<rpma::conn>().recv(std::declval<T>(), 0, 0))
RPMA_CALL(req_recv, lvalue<rpma::conn_req>().recv(std::declval<T>(), 0, 0))
RPMA_CALL(srq_recv, lvalue<rpma::srq>().recv(std::declval<T>(), 0, 0))
RPMA_CALL(get_cq, std::declval<T>().get_cq())
RPMA_CALL(get_rcq, std::declval<T>().get_rcq())
RPMA_CALL(get_private_data, std::declval<T>().get_private_data())
RPMA_CALL(wait, std::declval<T>().wait())
/* an element of a batch keeps its local region until the operation completes */
RPMA_CALL(batch_read_dst, rpma::batch::read(std::declval<T>(), 0, lvalue<const rpma::mr_remote>(),
					    0, 0, rpma::flag::completion_always))
RPMA_CALL(batch_write_src, rpma::batch::write(lvalue<const rpma::mr_remote>(), 0, std::declval<T>(),
					      0, 0, rpma::flag::completion_always))
RPMA_CALL(batch_write_with_imm_src,
	  rpma::batch::write_with_imm(lvalue<const rpma::mr_remote>(), 0, std::declval<T>(), 0, 0,
				      rpma::flag::completion_always, 0u))
RPMA_CALL(batch_send_src, rpma::batch::send(std::declval<T>(), 0, 0, rpma::flag::completion_always))
RPMA_CALL(batch_send_with_imm_src,
	  rpma::batch::send_with_imm(std::declval<T>(), 0, 0, rpma::flag::completion_always, 0u))
/* ...and its remote region until it is posted */
RPMA_CALL(batch_read_src, rpma::batch::read(lvalue<rpma::mr_local>(), 0, std::declval<T>(), 0, 0,
					    rpma::flag::completion_always))
RPMA_CALL(batch_write_dst, rpma::batch::write(std::declval<T>(), 0, lvalue<const rpma::mr_local>(),
					      0, 0, rpma::flag::completion_always))
RPMA_CALL(batch_write_with_imm_dst,
	  rpma::batch::write_with_imm(std::declval<T>(), 0, lvalue<const rpma::mr_local>(), 0, 0,
				      rpma::flag::completion_always, 0u))
RPMA_CALL(batch_flush_dst, rpma::batch::flush(std::declval<T>(), 0, 0, rpma::flush_type::persistent,
					      rpma::flag::completion_always))
/* both regions temporaries */
RPMA_CALL(batch_write_both, rpma::batch::write(std::declval<T>(), 0, rpma::mr_local(), 0, 0,
					       rpma::flag::completion_always))

template <template <class, class> class Call, class T> constexpr bool lvalue_only()
{
	return Call<T &, void>::value && !Call<T, void>::value && !Call<const T, void>::value;
}
static_assert(lvalue_only<reg_ptr, rpma::peer>() && lvalue_only<reg_span, rpma::peer>() &&
		  lvalue_only<listen, rpma::peer>() && lvalue_only<req_create, rpma::peer>() &&
		  lvalue_only<req_create_cfg, rpma::peer>() &&
		  lvalue_only<srq_create, rpma::peer>() &&
		  lvalue_only<srq_create_cfg, rpma::peer>(),
	      "the peer of what is created from it");
static_assert(lvalue_only<set_srq, rpma::srq>(), "the shared RQ of a configuration");
static_assert(lvalue_only<read, rpma::mr_local>() && lvalue_only<write, rpma::mr_local>() &&
		  lvalue_only<write_with_imm, rpma::mr_local>() &&
		  lvalue_only<send, rpma::mr_local>() &&
		  lvalue_only<send_with_imm, rpma::mr_local>() &&
		  lvalue_only<recv, rpma::mr_local>() && lvalue_only<req_recv, rpma::mr_local>() &&
		  lvalue_only<srq_recv, rpma::mr_local>(),
	      "the local region of an operation in flight");
static_assert(lvalue_only<batch_read_dst, rpma::mr_local>() &&
		  lvalue_only<batch_write_src, rpma::mr_local>() &&
		  lvalue_only<batch_write_with_imm_src, rpma::mr_local>() &&
		  lvalue_only<batch_send_src, rpma::mr_local>() &&
		  lvalue_only<batch_send_with_imm_src, rpma::mr_local>(),
	      "the local region of an element of a batch");
static_assert(lvalue_only<batch_read_src, rpma::mr_remote>() &&
		  lvalue_only<batch_write_dst, rpma::mr_remote>() &&
		  lvalue_only<batch_write_with_imm_dst, rpma::mr_remote>() &&
		  lvalue_only<batch_flush_dst, rpma::mr_remote>() &&
		  !batch_write_both<rpma::mr_remote>::value,
	      "the remote region of an element of a batch, read when the batch is posted");
RPMA_CALL(template_dst, rpma::write_template::create(lvalue<rpma::conn>(), std::declval<T>(),
						     lvalue<const rpma::mr_local>(),
						     rpma::flush_type::persistent))
RPMA_CALL(template_src,
	  rpma::write_template::create(lvalue<rpma::conn>(), lvalue<const rpma::mr_remote>(),
				       std::declval<T>(), rpma::flush_type::persistent))
static_assert(lvalue_only<template_dst, rpma::mr_remote>() &&
		  lvalue_only<template_src, rpma::mr_local>(),
	      "the regions a write template refers to for its whole life");
static_assert(lvalue_only<get_cq, rpma::conn>() && lvalue_only<get_rcq, rpma::conn>() &&
		  lvalue_only<get_rcq, rpma::srq>() &&
		  lvalue_only<get_private_data, rpma::conn>() &&
		  lvalue_only<get_private_data, rpma::conn_req>() &&
		  lvalue_only<wait, rpma::conn>(),
	      "views into an owner");
/* the peer's address is a copy, not a view: even a temporary request gives it */
/* (noexcept() in parentheses for clang-format, as for value() above) */
static_assert(std::is_same<decltype(std::declval<const rpma::conn_req &>().get_peer_addr()),
			   rpma::result<sockaddr_storage>>::value &&
		  (noexcept(std::declval<rpma::conn_req>().get_peer_addr())),
	      "get_peer_addr");
static_assert(std::is_same<decltype(std::declval<const rpma::conn_req &>().get_local_addr()),
			   rpma::result<sockaddr_storage>>::value &&
		  (noexcept(std::declval<rpma::conn_req>().get_local_addr())),
	      "get_local_addr");
/* the queue pair numbers are plain numbers: even a temporary request gives them */
static_assert(std::is_same<decltype(std::declval<const rpma::conn_req &>().get_qp_num()),
			   rpma::result<std::uint32_t>>::value &&
		  (noexcept(std::declval<rpma::conn_req>().get_qp_num())),
	      "conn_req::get_qp_num");
static_assert(std::is_same<decltype(std::declval<const rpma::conn_req &>().get_peer_qp_num()),
			   rpma::result<std::uint32_t>>::value &&
		  (noexcept(std::declval<rpma::conn_req>().get_peer_qp_num())),
	      "conn_req::get_peer_qp_num");

/* what a call only reads while it runs may well be a temporary */
RPMA_CALL(write_dst,
	  lvalue<rpma::conn>().write(std::declval<T>(), 0, lvalue<const rpma::mr_local>(), 0, 0,
				     rpma::flag::completion_always))
RPMA_CALL(flush_dst,
	  lvalue<rpma::conn>().flush(std::declval<T>(), 0, 0, rpma::flush_type::persistent,
				     rpma::flag::completion_always))
RPMA_CALL(apply_peer_cfg, lvalue<rpma::conn>().apply_remote_peer_cfg(std::declval<T>()))
RPMA_CALL(next_conn_req_cfg, lvalue<rpma::ep>().next_conn_req(std::declval<T>()))
RPMA_CALL(req_create_with_cfg,
	  rpma::conn_req::create(lvalue<rpma::peer>(), "", "", std::declval<T>()))
RPMA_CALL(srq_create_with_cfg, rpma::srq::create(lvalue<rpma::peer>(), std::declval<T>()))
RPMA_CALL(connect_with, lvalue<rpma::conn_req>().connect(std::declval<T>()))
static_assert(write_dst<rpma::mr_remote>::value && flush_dst<rpma::mr_remote>::value &&
		  apply_peer_cfg<rpma::peer_cfg>::value &&
		  next_conn_req_cfg<rpma::conn_cfg>::value &&
		  req_create_with_cfg<rpma::conn_cfg>::value &&
		  srq_create_with_cfg<rpma::srq_cfg>::value &&
		  connect_with<std::vector<std::byte>>::value,
	      "a remote region, a configuration, private data: read by the call only");
#undef RPMA_CALL

/* the data path must not be able to throw */
static_assert(noexcept(std::declval<rpma::conn &>().write(std::declval<const rpma::mr_remote &>(),
							  0, std::declval<const rpma::mr_local &>(),
							  0, 0, rpma::flag::completion_always)),
	      "write");
static_assert(noexcept(std::declval<const rpma::cq &>().get_completion()), "get_completion");
static_assert(noexcept(std::declval<rpma::conn &>().post_batch(
		  std::declval<rpma::span<const rpma_batch_op>>())),
	      "post_batch");

/* a batch's outcome is a result<void> that also names an element */
static_assert(
    std::is_base_of<rpma::result<void>, rpma::batch_result>::value &&
	std::is_same<decltype(std::declval<rpma::conn &>().post_batch(
			 std::declval<rpma::span<const rpma_batch_op>>())),
		     rpma::batch_result>::value &&
	std::is_same<decltype(std::declval<const rpma::batch_result &>().failed()), int>::value,
    "batch_result");

/*
 * Names every member function so that it is compiled. Never called with
 * real objects: main() only runs it when given an impossible argument count.
 */
int instantiate_everything(ibv_context *ctx)
{
	int bad = 0;
	char mem[64] = {};
	std::byte desc[64] = {};

	auto peer = rpma::peer::create(ctx);
	bad += !peer;
	rpma::peer &p = *peer;

	auto pcfg = rpma::peer_cfg::create();
	bad += !pcfg.has_value();
	bad += !pcfg->set_direct_write_to_pmem(true);
	bad += !pcfg->get_direct_write_to_pmem().value_or(false);
	bad += !pcfg->get_descriptor_size();
	bad += !pcfg->get_descriptor(desc);
	auto pcfg2 = rpma::peer_cfg::from_descriptor(desc);
	bad += !pcfg2;
	bad += !pcfg->get_versioned_descriptor_size();
	bad += !pcfg->get_versioned_descriptor(desc);

	auto mr = rpma::mr_local::reg(p, mem, sizeof(mem), rpma::usage::write_src);
	auto mr_span = rpma::mr_local::reg(p, rpma::as_writable_bytes(rpma::span<char>(mem)),
					   rpma::usage::read_dst);
	bad += !mr || !mr_span;
	bad += !mr->get_descriptor_size();
	bad += !mr->get_descriptor(desc);
	bad += !mr->get_versioned_descriptor_size();
	bad += !mr->get_versioned_descriptor(desc);
	bad += !mr->set_persist_fn(nullptr);
	bad += !mr->get_ptr();
	bad += !mr->get_size();
	bad += !mr->advise(0, 8, IBV_ADVISE_MR_ADVICE_PREFETCH);
	bad += !mr->advise(0, 8, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH);

	auto remote = rpma::mr_remote::from_descriptor(rpma::span<const std::byte>(desc));
	bad += !remote;
	bad += !remote->get_size();
	bad += !remote->get_flush_type();

	auto scfg = rpma::srq_cfg::create();
	bad += !scfg->set_rq_size(10) || !scfg->set_rcq_size(10);
	bad += !scfg->get_rq_size() || !scfg->get_rcq_size();
	auto srq = rpma::srq::create(p, *scfg);
	auto srq_default = rpma::srq::create(p);
	bad += !srq || !srq_default;
	bad += !srq->recv(*mr, 0, 8, nullptr);
	bad += !srq->get_rcq();

	auto cfg = rpma::conn_cfg::create();
	rpma::conn_cfg &c = *cfg;
	bad += !c.set_timeout(std::chrono::milliseconds(10)) || !c.get_timeout();
	bad += !c.set_cq_size(1) || !c.get_cq_size();
	bad += !c.set_rcq_size(1) || !c.get_rcq_size();
	bad += !c.set_sq_size(1) || !c.get_sq_size();
	bad += !c.set_rq_size(1) || !c.get_rq_size();
	bad += !c.set_compl_channel(true) || !c.get_compl_channel().has_value();
	bad += !c.set_srq(*srq) || !c.clear_srq() || !c.get_srq();
	bad += !c.set_gpspm(rpma::gpspm_mode::disabled) || !c.get_gpspm();
	bad += !c.set_gpspm_spin(std::chrono::microseconds(1)) || !c.get_gpspm_spin();
	bad += !pcfg->get_versioned_descriptor(c, desc);

	auto ep = rpma::ep::listen(p, "127.0.0.1", "7204");
	bad += !ep || !ep->get_fd();
	auto in_req = ep->next_conn_req();
	auto in_req_cfg = ep->next_conn_req(c);
	bad += !in_req || !in_req_cfg;
	bad += !in_req->get_private_data();
	auto from = in_req->get_peer_addr();
	bad += !from || from->ss_family == AF_UNSPEC;
	bad += !in_req->get_local_addr();
	bad += !in_req->get_peer_qp_num();
	bad += !in_req->recv(*mr, 0, 8);
	bad += !in_req->get_qp_num();
	auto accepted = in_req->connect(rpma::as_bytes(rpma::span<const char>(mem)));
	bad += !accepted;

	auto out_req = rpma::conn_req::create(p, "127.0.0.1", "7204");
	auto out_req_cfg = rpma::conn_req::create(p, "127.0.0.1", "7204", c);
	bad += !out_req || !out_req_cfg;
	bad += out_req->get_peer_addr().value().ss_family != AF_INET;
	bad += !out_req->get_local_addr();
	bad += !out_req->get_qp_num();
	auto conn = out_req->connect();
	bad += !conn;
	rpma::conn &cn = *conn;
	bad += !cn.get_event_fd();
	bad += cn.next_event().value_or(RPMA_CONN_UNDEFINED) != RPMA_CONN_ESTABLISHED;
	bad += !cn.is_up().value_or(false);
	bad += cn.get_private_data().value().empty();
	bad += !cn.apply_remote_peer_cfg(*pcfg2);
	bad += !cn.get_qp_num();
	bad += cn.get_flush_method(*remote, rpma::flush_type::persistent)
		   .value_or(rpma::flush_method::none) == rpma::flush_method::none;
	bad += !cn.get_compl_fd();
	auto woken = cn.wait();
	bad += !woken || !woken->queue || woken->is_rcq;

	const char eight[RPMA_ATOMIC_WRITE_ALIGNMENT] = {};
	bad += !cn.read(*mr, 0, *remote, 0, 8, rpma::flag::completion_always, nullptr);
	bad += !cn.write(*remote, 0, *mr, 0, 8, rpma::flag::completion_on_error);
	bad += !cn.write_with_imm(*remote, 0, *mr, 0, 8, rpma::flag::completion_always, 7u);
	bad += !cn.atomic_write(*remote, 0, eight, rpma::flag::completion_always);
	bad += !cn.atomic_write(*remote, 0, std::uint64_t{ 42 }, rpma::flag::completion_always);
	bad +=
	    !cn.flush(*remote, 0, 8, rpma::flush_type::persistent, rpma::flag::completion_always);
	bad += !cn.send(*mr, 0, 8, rpma::flag::completion_always);
	bad += !cn.send_with_imm(*mr, 0, 8, rpma::flag::completion_always, 1u);
	bad += !cn.recv(*mr, 0, 8);
	rpma_batch_op ops[] = {
		rpma::batch::read(*mr, 0, *remote, 0, 8, rpma::flag::completion_always),
		rpma::batch::write(*remote, 0, *mr, 0, 8, rpma::flag::completion_on_error),
		rpma::batch::write_with_imm(*remote, 0, *mr, 0, 8, rpma::flag::completion_always,
					    7u),
		rpma::batch::flush(*remote, 0, 8, rpma::flush_type::persistent,
				   rpma::flag::completion_always),
		rpma::batch::send(*mr, 0, 8, rpma::flag::completion_always),
		rpma::batch::send_with_imm(*mr, 0, 8, rpma::flag::completion_always, 1u),
	};
	rpma::batch_result posted = cn.post_batch(ops);
	bad += !posted || posted.failed() != -1;
	bad += !cn.post_batch({ ops[1], ops[3] });

	auto cq = cn.get_cq();
	auto rcq = cn.get_rcq();
	bad += !cq || !rcq;
	const rpma::cq q = *cq;
	bad += !q.get_fd() || !q.wait();
	rpma_completion one;
	bad += !q.get_completion(one);
	auto got = q.get_completion();
	bad += !got || got->op_status != IBV_WC_SUCCESS;
	rpma_completion many[4];
	bad += q.get_completions(many).value_or(0) > 4;
	bad += !q.wait_completion(one, std::chrono::milliseconds(10));
	bad += !q.wait_completion(one);
	bad += !q.wait_completion(std::chrono::seconds(1));
	bad += !q.wait_completion();
	ibv_wc wc[2];
	bad += !q.get_wc(wc);

	bad += !cn.disconnect();
	bad += !conn->reset();

	bad += !rpma::utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL);
	bad += !rpma::utils_ibv_context_is_odp_capable(ctx).value_or(false);
	bad += rpma::utils_conn_event_2str(RPMA_CONN_CLOSED) == nullptr;
	bad += !rpma::log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR);
	bad += !rpma::log_get_threshold(RPMA_LOG_THRESHOLD);
	bad += !rpma::log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);

	rpma_peer *raw = peer->release();
	rpma::peer adopted(raw);
	bad += !adopted;
	return bad;
}

/* ---- checks that need no device ---- */

int failures;

void check(bool ok, const char *what)
{
	if (!ok) {
		std::fprintf(stderr, "header_only: failed: %s\n", what);
		failures++;
	}
}

void check_span()
{
	char chars[5] = { 'r', 'p', 'm', 'a', '\0' };
	rpma::span<char> s(chars);
	check(s.size() == 5 && s.data() == chars, "span from an array");
	rpma::span<const char> cs = s;
	check(cs.size() == 5 && cs.data() == chars, "span<const T> from span<T>");
	rpma::span<const std::byte> bytes = rpma::as_bytes(cs);
	check(bytes.size() == 5 && static_cast<const void *>(bytes.data()) == chars, "as_bytes");
	check(s.subspan(1, 2).size() == 2 && s.subspan(1, 2)[0] == 'p', "subspan");
	check(s.first(3).size() == 3 && s.last(2)[0] == 'a', "first, last");

	std::string str("abc");
	rpma::span<const char> from_container(str);
	check(from_container.size() == 3 && from_container.data() == str.data(),
	      "span from a contiguous container");
	std::size_t n = 0;
	for (char ch : from_container)
		n += ch != '\0';
	check(n == 3, "iteration");
	check(rpma::span<int>().empty(), "empty span");

	std::vector<int> vec{ 1, 2, 3, 4 };
	rpma::span<int> from_vector = vec;
	from_vector[1] = 20;
	check(from_vector.size() == 4 && from_vector.data() == vec.data() && vec[1] == 20,
	      "span from a std::vector");
	std::array<std::byte, 6> arr{};
	rpma::span<const std::byte> from_array = arr;
	check(from_array.size() == 6 && from_array.data() == arr.data(), "span from a std::array");
	check(rpma::as_writable_bytes(from_vector).size() == 4 * sizeof(int), "as_writable_bytes");
	auto length = [](rpma::span<const int> s) { return s.size(); };
	check(length({ vec.data() + 1, 2 }) == 2, "span from a pointer and a size, in braces");
#ifdef RPMA_HPP_STD_SPAN
	std::span<int> std_span(vec);
	rpma::span<int> from_std = std_span;
	check(from_std.data() == vec.data() && from_std.size() == 4, "span from a std::span");
	rpma::span<const int> from_std_subspan = std_span.subspan(2);
	check(from_std_subspan.data() == vec.data() + 2 && from_std_subspan.size() == 2,
	      "span from a temporary std::span");
	std::span<const int> back = from_vector;
	check(back.data() == vec.data() && back.size() == 4, "std::span from a span");
#endif
}

void check_errors()
{
	std::error_code ec = rpma::errc::inval;
	check(std::string(ec.category().name()) == "rpma", "category name");
	check(ec.message() == rpma_err_2str(RPMA_E_INVAL), "message is rpma_err_2str");
	check(ec.value() == RPMA_E_INVAL, "value is the RPMA_E_* code");
	check(ec == std::errc::invalid_argument, "inval matches std::errc::invalid_argument");
	check(std::error_code(rpma::errc::nomem) == std::errc::not_enough_memory, "nomem");
	check(std::error_code(rpma::errc::nosupp) == std::errc::not_supported, "nosupp");
	check(std::error_code(rpma::errc::no_completion) != std::errc::invalid_argument,
	      "no_completion is not inval");
	check(std::string(rpma::errc_name(RPMA_E_NO_COMPLETION)) == "RPMA_E_NO_COMPLETION",
	      "errc_name");

	rpma::result<void> ok;
	check(ok.has_value() && !ok.error() && ok.code() == 0, "result<void> success");
	rpma::result<void> failed = rpma::result<void>::from_code(RPMA_E_AGAIN);
	check(!failed && failed.error() == rpma::errc::again && failed.code() == RPMA_E_AGAIN,
	      "result<void> failure");

	rpma::result<int> seven = 7;
	check(seven && *seven == 7 && seven.value() == 7 && !seven.error(), "result<int> value");
	rpma::result<int> none = rpma::error(RPMA_E_NO_EVENT);
	check(!none && none.error() == rpma::errc::no_event && none.value_or(-1) == -1,
	      "result<int> failure");
	rpma::result<int> empty_error = rpma::error();
	check(!empty_error && empty_error.code() == RPMA_E_UNKNOWN &&
		  empty_error.error() == rpma::errc::unknown,
	      "an empty error makes a failure of a result<T>, never a success");
	rpma::result<void> void_from_empty = rpma::error(0);
	check(void_from_empty && void_from_empty.code() == 0, "and a success of a result<void>");
	rpma::result<rpma::peer> no_peer = rpma::errc::nomem;
	check(!no_peer && no_peer.error() == rpma::errc::nomem, "result<owner> failure");

	/* from_code: what a C function returned, 0 a success */
	check(rpma::result<void>::from_code(0) && !rpma::result<void>::from_code(0).error(),
	      "from_code(0) is a success");
	check(rpma::result<void>::from_code(RPMA_E_NOSUPP).error() == rpma::errc::nosupp,
	      "from_code of a code is that failure");

	/* a failure passes from one result type to another as it is */
	auto forward = [](const rpma::result<rpma::peer> &r) -> rpma::result<std::size_t> {
		if (!r)
			return r.error();
		return std::size_t{ 1 };
	};
	check(forward(rpma::errc::provider).error() == rpma::errc::provider, "error passes on");
	auto forward_void = [](rpma::result<int> r) -> rpma::result<void> { return r.error(); };
	check(forward_void(5) && forward_void(rpma::errc::again).error() == rpma::errc::again,
	      "error passes on to result<void>");

	rpma::error e = rpma::errc::inval;
	std::error_code as_std = e;
	check(e && e.value() == RPMA_E_INVAL && &e.category() == &rpma::category() &&
		  as_std == rpma::errc::inval && e == std::errc::invalid_argument &&
		  e.message() == rpma_err_2str(RPMA_E_INVAL),
	      "rpma::error is a std::error_code");
	check(!rpma::error() && !rpma::error(0) && rpma::error(RPMA_E_AGAIN) == rpma::errc::again,
	      "rpma::error from a C return value");

	/* a result<bool> answers with *r, succeeds with has_value() */
	/* a batch's outcome: the code, and which element */
	rpma::batch_result batch_ok;
	check(batch_ok && batch_ok.code() == 0 && batch_ok.failed() == -1, "batch_result success");
	rpma::batch_result batch_failed(rpma::result<void>::from_code(RPMA_E_AGAIN), 3);
	check(!batch_failed && batch_failed.error() == rpma::errc::again &&
		  batch_failed.failed() == 3,
	      "batch_result failure names its element");
	rpma::result<void> sliced = batch_failed;
	check(sliced.error() == rpma::errc::again, "batch_result passes on as a result<void>");

	rpma::result<bool> no = false;
	check(no.has_value() && !*no && !no.value_or(true), "result<bool>");

#if defined(__cpp_exceptions)
	rpma::result<int> failed_int = rpma::errc::nomem;
	bool thrown = false;
	try {
		(void)failed_int.value();
	} catch (const std::system_error &ex) {
		thrown =
		    ex.code() == rpma::errc::nomem && ex.code() == std::errc::not_enough_memory;
	}
	check(thrown, "value() of a failure throws std::system_error with its code");
	thrown = false;
	try {
		rpma::result<void>::from_code(RPMA_E_AGAIN).value();
	} catch (const std::system_error &ex) {
		thrown = ex.code() == rpma::errc::again;
	}
	check(thrown, "result<void>::value() of a failure throws");
	thrown = false;
	try {
		(void)seven.value();
		rpma::result<void>().value();
	} catch (...) {
		thrown = true;
	}
	check(!thrown, "value() of a success does not throw");
#endif
}

} /* namespace */

int main(int argc, char *argv[])
{
	(void)argv;
	if (argc > 1000)
		return instantiate_everything(nullptr);

	check_span();
	check_errors();
#ifdef RPMA_HPP_STD_SPAN
	std::printf("header_only: C++ %ld, rpma::span with std::span\n",
		    static_cast<long>(__cplusplus));
#else
	std::printf("header_only: C++ %ld, rpma::span\n", static_cast<long>(__cplusplus));
#endif
	return failures == 0 ? 0 : 1;
}
