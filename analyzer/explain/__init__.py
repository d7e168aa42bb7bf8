"""Answers for people: the input contract, `why` a failure log happened, confirmation by running."""
