"""Empty-tensor rules: reductions and divisions over a dimension the package accepts as 0.

Placeholder: the rule writer fills this module (each rule registered with `@register`).
"""
