; Statement-level calls: kernel launches (`call_triton_<k>(...)`, `cpp_fused_<k>(...)`),
; shim calls wrapped in AOTI_TORCH_ERROR_CODE_CHECK(...), and AOTI_TORCH_CHECK(cond, "msg").
(expression_statement
  (call_expression
    function: (_) @function
    arguments: (argument_list) @args) @call) @statement
