; Writes of C++ kernels through a pointer: `tmp4.store(out_ptr0 + static_cast<int64_t>(x0), 16);`
; (vectorized; @method is checked to be `store`) and `out_ptr0[static_cast<int64_t>(x0)] = tmp3;`
; (@operator is checked to be `=`).
(expression_statement
  (call_expression
    function: (field_expression
      argument: (_) @value
      field: (field_identifier) @method)
    arguments: (argument_list . (_) @target))) @statement
(expression_statement
  (assignment_expression
    left: (subscript_expression
      argument: (identifier) @target)
    operator: _ @operator
    right: (_) @value)) @statement
