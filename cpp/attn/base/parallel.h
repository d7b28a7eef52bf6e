// A small pool of threads for the data-parallel loops of a training step: the matrix products
// (split by rows or columns of C), the per-sequence head loops and the row-wise layers. Results
// never depend on the thread count: a loop is cut only into parts whose outputs are disjoint and
// each computed exactly as one thread computes it, never into parts of one sum.
//
// Native builds and the wasm build with pthreads have threads; elsewhere (the SIMD and scalar
// wasm builds) thread_capacity() is 1 and parallel_for runs its loop in the calling thread.
#pragma once

#include <cstdint>
#include <type_traits>

namespace attn {

// Whether this build can run threads at all.
bool threads_supported();

// The most threads set_thread_count accepts: 64 with threads (more threads than cores run, only
// slower), 1 without. In the wasm build a thread runs on one of the pthread workers started with
// the module (so that starting it never waits for the browser): a thread past them cannot start,
// and set_thread_count says so.
int thread_capacity();

// Sets how many threads run the loops (the calling thread included): n in [1, thread_capacity()],
// else an Error of kind Input. Starts or stops workers; not from inside a parallel loop.
void set_thread_count(int n);
int thread_count();

// Runs body(part, begin, end) over [0, n) cut into at most thread_count() contiguous parts whose
// sizes are multiples of grain (the last takes the rest), part 0 in the calling thread; returns
// when all are done. Runs the whole range as part 0 when there is one thread, n <= grain, or when
// called from inside another parallel loop. If a part throws, the others still finish and the
// error reaches the caller.
template <typename Body>
void parallel_for(int64_t n, int64_t grain, Body&& body);

// The number of parts parallel_for(n, grain, ...) cuts [0, n) into (per-part scratch sizes).
int parallel_parts(int64_t n, int64_t grain);

namespace detail {
using PartFn = void (*)(void* ctx, int part, int64_t begin, int64_t end);
void run_parallel(int64_t n, int64_t grain, PartFn fn, void* ctx);
}  // namespace detail

template <typename Body>
void parallel_for(int64_t n, int64_t grain, Body&& body) {
  if (n <= 0) return;
  auto call = [](void* ctx, int part, int64_t begin, int64_t end) {
    (*static_cast<std::remove_reference_t<Body>*>(ctx))(part, begin, end);
  };
  detail::run_parallel(n, grain, call, &body);
}

}  // namespace attn
