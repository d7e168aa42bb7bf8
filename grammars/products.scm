; Products whose left factor is a name: `tmp_acc0 * tmp0`, a C++ kernel's prod accumulator update.
(binary_expression
  left: (identifier) @factor
  operator: "*") @product
