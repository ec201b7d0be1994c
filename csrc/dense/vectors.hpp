// Exact top-k by dot product over a row-major float32 matrix, fast.
//
// A query scores every row against an int8 copy of the matrix (one scale per
// row) with a rigorous bound on the error of that estimate; only the rows
// whose upper bound reaches the k-th best lower bound are scored exactly.
// The result is exactly the top k of the exact scores, ties by row: the
// pruning only decides which rows are worth scoring.
//
// The exact score is the sum, in dimension order and in double precision, of
// the float32 products (each exact in double), as the Python reference sums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace codelex {

// The int8 codes of each row (round(x / scale), scale = max|x| / 127), the
// row's scale, the sum of its codes' magnitudes, and its largest residual
// |x_i - scale * code_i| (measured, so the bound never rests on an assumption).
void quantize_rows(const float* m, size_t n, size_t d, int8_t* codes, float* scales, int32_t* l1, float* resid);

// The exact score of one row.
double exact_dot(const float* row, const float* q, size_t d);

// Every row's exact score.
void exact_dots(const float* m, size_t n, size_t d, const float* q, double* out);

struct TopKStats {
  size_t scored_exactly = 0;  // candidates after the bound
};

// The k best rows (allowed[r] != 0, or every row when allowed is null), best
// first, ties by the smaller row; returns how many (min(k, allowed rows)).
size_t exact_top_k(const float* m, const int8_t* codes, const float* scales, const int32_t* l1, const float* resid, size_t n, size_t d,
                   const float* q, const uint8_t* allowed, size_t k, uint32_t* out_rows, double* out_scores,
                   TopKStats* stats, int threads);

}  // namespace codelex
