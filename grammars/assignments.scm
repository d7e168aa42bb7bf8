; Constructor facts: `inputs_info_[0].name = "arg0_1";`, `constants_info_[0].shape = {100, 16};`,
; `in_spec_ = R"(...)";`.
(expression_statement
  (assignment_expression
    left: (_) @left
    right: (_) @right)) @statement
