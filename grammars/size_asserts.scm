; `assert_size_stride(arg6_1, {s17, 8L}, {8L, 1L}, "input");` in run_impl (torch >= 2.13): the
; sizes (and strides) a tensor must have, which may name a symbol read from another input.
(expression_statement
  (call_expression
    function: (identifier) @function
    arguments: (argument_list . (identifier) @tensor . (initializer_list) @sizes . (initializer_list)? @strides))
  (#eq? @function "assert_size_stride")) @statement
