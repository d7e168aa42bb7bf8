; The AOTInductorModel constructor's tables: `inputs_info_[0].name = "arg0_1";`,
; `constants_info_[0].shape = {100, 16};`, `constants_info_[0].original_fqn = "emb.weight";`
(expression_statement
  (assignment_expression
    left: (field_expression
      argument: (subscript_expression
        argument: (identifier) @table
        indices: (subscript_argument_list . (number_literal) @index .))
      field: (field_identifier) @field)
    right: (_) @value)
  (#any-of? @table "inputs_info_" "constants_info_"))
; and the input/output tree spec: `in_spec_ = R"([1, {...}])";`
(expression_statement
  (assignment_expression
    left: (identifier) @in_spec
    right: (_) @value)
  (#eq? @in_spec "in_spec_"))
