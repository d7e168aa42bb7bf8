; A kernel's own checks with a literal message (not index bounds, but `why` routes their failures):
;   `throw std::runtime_error("one_hot: Class values must be smaller than num_classes.");`
(throw_statement
  (call_expression
    function: (qualified_identifier) @function
    arguments: (argument_list . (string_literal) @message .))
  (#eq? @function "std::runtime_error")) @throw
; Inside an expression, as Inductor's C++ kernels write it:
;   `(tmp1 ? 0 : (throw std::runtime_error("one_hot: ..."), 0));`
; tree-sitter-cpp 0.23 recovers this as a call of the qualified name `throw std::runtime_error`
; (scope `throw`, an ERROR node for `std`).
(call_expression
  function: (qualified_identifier) @function
  arguments: (argument_list . (string_literal) @message .)
  (#match? @function "^throw[ \t\n]+std::runtime_error$")) @throw
