; The AOTI_RUNTIME_CHECK_INPUTS gate. At the top of __check_inputs_outputs every check_input_N
; call below it is skipped unless the variable is set:
;   `if (!_check_aoti_runtime_check_inputs_env()){ return; }`
; and in run_impl the input asserts run only when it is set:
;   `if (_check_aoti_runtime_check_inputs_env()) { assert_size_stride(arg0_1, {s77, 8L}, ...); }`
(if_statement
  condition: (condition_clause
    value: (unary_expression
      operator: "!"
      argument: (call_expression function: (identifier) @env)))
  consequence: (compound_statement (return_statement))
  (#eq? @env "_check_aoti_runtime_check_inputs_env")) @skip_unless_set
(if_statement
  condition: (condition_clause
    value: (call_expression function: (identifier) @env))
  (#eq? @env "_check_aoti_runtime_check_inputs_env")) @only_if_set
