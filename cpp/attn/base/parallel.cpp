#include "attn/base/parallel.h"

#include <algorithm>
#include <utility>

#include "attn/base/tensor.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define ATTN_THREADS 1
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>
#endif

namespace attn {

namespace {

struct Plan {
  int parts;
  int64_t chunk;  // a multiple of grain; part p covers [p * chunk, min(n, (p + 1) * chunk))
};

Plan plan(int64_t n, int64_t grain, int threads) {
  grain = std::max<int64_t>(1, grain);
  const int64_t units = (n + grain - 1) / grain;
  const int parts = int(std::max<int64_t>(1, std::min<int64_t>(threads, units)));
  const int64_t chunk = (units + parts - 1) / parts * grain;
  return {int((n + chunk - 1) / chunk), chunk};
}

#ifdef ATTN_THREADS

constexpr int kMaxThreads = 64;

// Workers wait for a new job by spinning on its generation for about this many checks (the next
// loop of a step usually comes within microseconds), then sleep on a condition variable.
constexpr int kSpins = 1 << 14;

class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return int(workers_.size()) + 1; }

  void resize(int n) {
    if (n - 1 < int(workers_.size())) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        generation_.fetch_add(1, std::memory_order_release);
      }
      wake_.notify_all();
      for (std::thread& t : workers_) t.join();
      workers_.clear();
      stop_ = false;
    }
    // A new worker waits for the next job, not the last one (whose body is gone).
    const uint64_t now = generation_.load(std::memory_order_acquire);
    while (int(workers_.size()) < n - 1) {
      const int index = int(workers_.size()) + 1;
      workers_.emplace_back([this, index, now] { work(index, now); });  // throws std::system_error
    }
  }

  // Part 0 here, parts 1.. on the workers; returns when all are done.
  void run(const Plan& p, int64_t n, detail::PartFn fn, void* ctx) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = {fn, ctx, n, p.chunk, p.parts};
      pending_.store(p.parts - 1, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    inside_ = true;
    std::exception_ptr error;
    try {
      fn(ctx, 0, 0, std::min(n, p.chunk));
    } catch (...) {
      error = std::current_exception();
    }
    inside_ = false;
    for (int i = 0; i < kSpins && pending_.load(std::memory_order_acquire) > 0; ++i) {
    }
    if (pending_.load(std::memory_order_acquire) > 0) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    // The first part's error, else a worker's: the loop's parts all ran, none is left running.
    if (!error) error = std::exchange(worker_error_, nullptr);
    worker_error_ = nullptr;
    if (error) std::rethrow_exception(error);
  }

  // Whether this thread is inside a parallel loop (a worker, or the caller running part 0).
  static thread_local bool inside_;

 private:
  struct Job {
    detail::PartFn fn = nullptr;
    void* ctx = nullptr;
    int64_t n = 0, chunk = 0;
    int parts = 0;
  };

  void work(int index, uint64_t seen) {
    inside_ = true;
    for (;;) {
      uint64_t g = generation_.load(std::memory_order_acquire);
      for (int i = 0; i < kSpins && g == seen; ++i) g = generation_.load(std::memory_order_acquire);
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
        if (stop_) return;
        seen = generation_.load(std::memory_order_relaxed);
        job = job_;
      }
      if (index >= job.parts) continue;  // this loop has fewer parts than threads
      const int64_t begin = index * job.chunk;
      try {
        job.fn(job.ctx, index, begin, std::min(job.n, begin + job.chunk));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!worker_error_) worker_error_ = std::current_exception();
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  Job job_;
  std::exception_ptr worker_error_;  // the first error a worker's part threw (under mutex_)
  bool stop_ = false;
};

thread_local bool Pool::inside_ = false;

Pool& pool() {
  static Pool p;
  return p;
}

#endif  // ATTN_THREADS

}  // namespace

bool threads_supported() {
#ifdef ATTN_THREADS
  return true;
#else
  return false;
#endif
}

int thread_capacity() {
#ifdef ATTN_THREADS
  return kMaxThreads;
#else
  return 1;
#endif
}

void set_thread_count(int n) {
  const int cap = thread_capacity();
  require(n >= 1 && n <= cap, "threads (", n, ") must be in [1, ", cap, "]");
#ifdef ATTN_THREADS
  require(!Pool::inside_, "set_thread_count cannot run inside a parallel loop");
  try {
    pool().resize(n);
  } catch (const std::system_error& e) {
    const int started = pool().size();
    throw Error(ErrorKind::Input, "",
                str_cat("threads (", n, "): only ", started, " could start (", e.what(), ")"));
  }
#endif
}

int thread_count() {
#ifdef ATTN_THREADS
  return pool().size();
#else
  return 1;
#endif
}

int parallel_parts(int64_t n, int64_t grain) {
  if (n <= 0) return 0;
#ifdef ATTN_THREADS
  if (Pool::inside_) return 1;
#endif
  return plan(n, grain, thread_count()).parts;
}

namespace detail {

void run_parallel(int64_t n, int64_t grain, PartFn fn, void* ctx) {
#ifndef ATTN_THREADS
  (void)grain;
#else
  if (!Pool::inside_ && pool().size() > 1) {
    const Plan p = plan(n, grain, pool().size());
    if (p.parts > 1) {
      pool().run(p, n, fn, ctx);
      return;
    }
  }
#endif
  fn(ctx, 0, 0, n);
}

}  // namespace detail

}  // namespace attn
