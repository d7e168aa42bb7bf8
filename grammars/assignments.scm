; Assignment statements: C++ kernels' reduction accumulators,
; `tmp_acc0_vec = max_masked_reduce(tmp_acc0_vec, tmp0, ks0);`, `tmp_acc0 = tmp_acc0 * tmp0;`.
(expression_statement
  (assignment_expression
    left: (_) @left
    right: (_) @right)) @statement
