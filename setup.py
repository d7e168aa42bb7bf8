"""Package discovery: every package and data folder under analyzer/ is found (namespace discovery,
so that analyzer/schemas/ ships without an __init__.py), and the query files of the top-level
grammars/ folder ship inside the wheel as analyzer.grammars (pyproject.toml alone cannot map a folder
outside the package tree while also discovering the rest)."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["analyzer", "analyzer.*"], exclude=["*.__pycache__"]),
              "analyzer.grammars"],
    package_dir={"analyzer.grammars": "grammars"},
)
