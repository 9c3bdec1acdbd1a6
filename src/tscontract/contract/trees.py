"""A clause's sqlglot tree, built only when something reads it: a warm run imports no sqlglot.

:class:`RowClause` (contract/clauses.py) and the plan's ``Check`` hold their predicate in a
:class:`TreeField`. What is stored is a :class:`LazyTree`: a ``key`` that names the tree (equal keys,
equal trees) and the tree itself, or how to make it: unpickle it (a contract read from the cache) or
call the builder that writes it (the plan's fixed values and patterns). What needs only the key, the
DuckDB SQL kept per clause (engines/run/rows.py), never builds the tree and so never loads sqlglot.

Reading the attribute builds the tree: ``clause.predicate`` is a sqlglot expression, as before.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from sqlglot.expressions import Expression

T = TypeVar("T")


class LazyTree:
    """A sqlglot tree, or what makes it, and the key that names it."""

    __slots__ = ("_key", "_make", "_value")

    def __init__(self, key: str | None, make: Callable[[], Expression] | None, value: Expression | None = None) -> None:
        self._key, self._make, self._value = key, make, value

    @classmethod
    def of(cls, tree: Expression) -> LazyTree:
        return cls(None, None, tree)

    @classmethod
    def made(cls, make: Callable[..., Expression], *args: Any) -> LazyTree:
        """The tree ``make(*args)``, named by the builder and its arguments: ``make`` is a module's function
        and ``args`` plain values (their ``repr`` tells them apart), so the key stands for the tree."""
        key = f"made:{make.__module__}.{make.__qualname__}{args!r}"
        return cls(key, partial(make, *args))

    @property
    def built(self) -> bool:
        return self._value is not None

    @property
    def value(self) -> Expression:
        if self._value is None:
            assert self._make is not None
            self._value = self._make()
        return self._value

    @property
    def key(self) -> str:
        """The tree's name. Once built, the tree's own text: a caller may have changed it in place."""
        if self._value is None and self._key is not None:
            return self._key
        return "tree:" + hashlib.sha256(repr(self.value).encode()).hexdigest()

    def __reduce__(self) -> tuple[Any, ...]:
        if self._value is None and self._make is not None:
            return (LazyTree, (self._key, self._make))
        blob = pickle.dumps(self.value, protocol=pickle.HIGHEST_PROTOCOL)
        return (LazyTree, (self.key, partial(pickle.loads, blob)))

    def __repr__(self) -> str:
        return f"LazyTree({self.value!r})" if self.built else f"LazyTree(<{self._key}>)"


class TreeField(Generic[T]):
    """A dataclass field holding a sqlglot tree (``T``: the expression, or it or None) as a :class:`LazyTree`.

    Set with a tree or a ``LazyTree``; read as the tree. ``optional`` fields default to None.
    """

    def __init__(self, *, optional: bool = False) -> None:
        self._optional = optional
        self._slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}_tree"

    def __get__(self, instance: object | None, owner: type | None = None) -> T:
        if instance is None:
            if self._optional:
                return None  # type: ignore[return-value]  # the dataclass's default
            raise AttributeError(self._slot)  # no default
        held = held_tree(instance, self._slot)
        return None if held is None else held.value  # type: ignore[return-value]

    def __set__(self, instance: object, value: Expression | LazyTree | None) -> None:
        held = value if value is None or isinstance(value, LazyTree) else LazyTree.of(value)
        instance.__dict__[self._slot] = held


def held_tree(instance: object, slot: str = "_predicate_tree") -> LazyTree | None:
    """The :class:`LazyTree` a :class:`TreeField` holds, without building the tree."""
    held = instance.__dict__.get(slot)
    return held if isinstance(held, LazyTree) else None
