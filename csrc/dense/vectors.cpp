#include "dense/vectors.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>

namespace codelex {

void quantize_rows(const float* m, size_t n, size_t d, int8_t* codes, float* scales, int32_t* l1, float* resid) {
  for (size_t r = 0; r < n; ++r) {
    const float* x = m + r * d;
    float mx = 0.0f;
    for (size_t i = 0; i < d; ++i) mx = std::max(mx, std::fabs(x[i]));
    const float scale = mx > 0 ? mx / 127.0f : 1.0f;
    int32_t sum = 0;
    double res = 0.0;
    for (size_t i = 0; i < d; ++i) {
      long c = std::lround(static_cast<double>(x[i]) / scale);
      c = std::clamp(c, -127L, 127L);
      codes[r * d + i] = static_cast<int8_t>(c);
      sum += static_cast<int32_t>(c < 0 ? -c : c);
      res = std::max(res, std::fabs(static_cast<double>(x[i]) - static_cast<double>(scale) * static_cast<double>(c)));
    }
    scales[r] = scale;
    l1[r] = sum;
    resid[r] = static_cast<float>(res * (1.0 + 1e-6));  // rounded up past the float conversion
  }
}

double exact_dot(const float* row, const float* q, size_t d) {
  double acc = 0.0;
  for (size_t i = 0; i < d; ++i) acc += static_cast<double>(row[i]) * static_cast<double>(q[i]);
  return acc;
}

void exact_dots(const float* m, size_t n, size_t d, const float* q, double* out) {
  for (size_t r = 0; r < n; ++r) out[r] = exact_dot(m + r * d, q, d);
}

namespace {

inline int32_t int8_dot(const int8_t* a, const int16_t* b, size_t d) {
  int32_t acc = 0;
  for (size_t i = 0; i < d; ++i) acc += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return acc;
}

}  // namespace

size_t exact_top_k(const float* m, const int8_t* codes, const float* scales, const int32_t* l1, const float* resid, size_t n, size_t d,
                   const float* q, const uint8_t* allowed, size_t k, uint32_t* out_rows, double* out_scores,
                   TopKStats* stats, int threads) {
  if (k == 0 || n == 0) return 0;
  // The query in int8 steps too, with its own residual bound.
  double qmax = 0.0, q_l1 = 0.0;
  for (size_t i = 0; i < d; ++i) {
    qmax = std::max(qmax, std::fabs(static_cast<double>(q[i])));
    q_l1 += std::fabs(static_cast<double>(q[i]));
  }
  const double sq = qmax > 0 ? qmax / 127.0 : 1.0;
  std::vector<int16_t> qq(d);
  double eq_max = 0.0;  // the largest |q_i - sq * qq_i|, measured rather than assumed
  for (size_t i = 0; i < d; ++i) {
    const long c = std::clamp(std::lround(static_cast<double>(q[i]) / sq), -127L, 127L);
    qq[i] = static_cast<int16_t>(c);
    eq_max = std::max(eq_max, std::fabs(static_cast<double>(q[i]) - sq * static_cast<double>(c)));
  }
  // x·q = s_r sq I_r + s_r sum_i c_i (q_i - sq qq_i) + sum_i (x_i - s_r c_i) q_i, so
  // |x·q - s_r sq I_r| <= s_r eq_max l1_r + resid_r ||q||_1; a relative slack covers the double sums.
  // Each pass keeps its k largest lower bounds (a min-heap): the k-th largest overall is the threshold.
  std::vector<double> upper(n);
  auto pass = [&](size_t lo, size_t hi, std::vector<double>& heap, size_t& live) {
    heap.clear();
    live = 0;
    for (size_t r = lo; r < hi; ++r) {
      if (allowed && !allowed[r]) {
        upper[r] = -INFINITY;
        continue;
      }
      ++live;
      const double s = scales[r];
      const double est = s * sq * static_cast<double>(int8_dot(codes + r * d, qq.data(), d));
      const double bound = (s * eq_max * static_cast<double>(l1[r]) + static_cast<double>(resid[r]) * q_l1) * (1.0 + 1e-6) + 1e-12;
      upper[r] = est + bound;
      const double low = est - bound;
      if (heap.size() < k) {
        heap.push_back(low);
        std::push_heap(heap.begin(), heap.end(), std::greater<double>());
      } else if (low > heap.front()) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<double>());
        heap.back() = low;
        std::push_heap(heap.begin(), heap.end(), std::greater<double>());
      }
    }
  };
  const int n_threads = threads > 1 && n * d >= (size_t{1} << 21) ? std::min(threads, 8) : 1;
  std::vector<std::vector<double>> heaps(n_threads);
  std::vector<size_t> lives(n_threads, 0);
  {
    std::vector<std::thread> pool;
    const size_t per = (n + n_threads - 1) / n_threads;
    for (int t = 1; t < n_threads; ++t) {
      const size_t lo = std::min(n, per * t), hi = std::min(n, per * (t + 1));
      pool.emplace_back(pass, lo, hi, std::ref(heaps[t]), std::ref(lives[t]));
    }
    pass(0, std::min(n, per), heaps[0], lives[0]);
    for (auto& th : pool) th.join();
  }
  size_t live = 0;
  std::vector<double> lows;
  for (int t = 0; t < n_threads; ++t) {
    live += lives[t];
    lows.insert(lows.end(), heaps[t].begin(), heaps[t].end());
  }
  k = std::min(k, live);
  if (k == 0) return 0;
  // The k-th largest lower bound: every row of the true top k scores at least that.
  std::nth_element(lows.begin(), lows.begin() + (k - 1), lows.end(), std::greater<double>());
  const double tau = lows[k - 1];
  std::vector<std::pair<double, uint32_t>> cand;
  for (size_t r = 0; r < n; ++r)
    if (upper[r] >= tau) cand.emplace_back(exact_dot(m + r * d, q, d), static_cast<uint32_t>(r));
  if (stats) stats->scored_exactly = cand.size();
  auto better = [](const std::pair<double, uint32_t>& a, const std::pair<double, uint32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  const size_t take = std::min(k, cand.size());
  std::partial_sort(cand.begin(), cand.begin() + take, cand.end(), better);
  for (size_t i = 0; i < take; ++i) {
    out_rows[i] = cand[i].second;
    out_scores[i] = cand[i].first;
  }
  return take;
}

}  // namespace codelex
