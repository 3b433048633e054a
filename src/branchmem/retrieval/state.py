"""Search state kept between queries: per candidate set, its BM25 postings and
its vector matrix, extended when new records become visible.

A search still reads the gate every time (`Store.memories` per anchor); the
state only saves re-deriving the ranking inputs from the records it returned.
Each use checks the state against that fresh candidate list (ids and texts,
in order): the same list reuses it, a list that extends it appends the new
records, anything else (a purge, an expiry, a record that became visible in
the middle of the order, another process's write) rebuilds it. So the state
never needs invalidating: it cannot serve a candidate set other than the one
the gate just gave, whichever `Store` object or process wrote the file.
"""

from __future__ import annotations

import math
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from ..model import Memory
from .keyword import K1, B
from .terms import SEP_B, clean
from .vectors import ROUND, dot_python, numpy_or_none

MAX_STATES = 4
"""Candidate sets kept per store (each holds a copy of its vectors)."""

MAX_TERMS = 4096
"""Terms whose postings a keyword state keeps (the most recently asked)."""

T = TypeVar("T")


class _Held:
    """The candidate list a state was made from: ids and texts, in order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # held while the state is brought up to date and read
        self.ids: list[str] = []
        self.texts: list[str] = []
        self.source: object = None  # the list last held in full (never mutated)

    def new_part(self, mems: Sequence[Memory]) -> list[Memory] | None:
        """The records past the held prefix, or None when ``mems`` does not extend it."""
        if mems is self.source:  # the very list held last: nothing to check
            return []
        n = len(self.ids)
        if getattr(mems, "base", None) is self.source and self.source is not None:
            return list(mems[n:])  # grown from the list held last (`candidates.Grown`)
        if len(mems) < n:
            return None
        head = mems[:n]
        if [m.id for m in head] != self.ids or [m.content for m in head] != self.texts:
            return None
        return list(mems[n:])

    def hold(self, mems: Sequence[Memory]) -> None:
        self.ids += [m.id for m in mems]
        self.texts += [m.content for m in mems]


class KeywordIndex(_Held):
    """BM25 inputs of one candidate set: each record's length, and its tokens
    as the stored bytes (`retrieval.terms`), one text per batch of records added.

    A term's postings, ``[positions], [term frequencies]`` in candidate order,
    are found the first time a query asks for it (one split of each text, in
    C) and kept, extended as records are added. So a first search costs what
    reading the tokens costs, not building postings for every term of every
    record; a search repeating a term reads the kept postings.

    In a text every token stands between a pair of `SEP` of its own (a
    record's tokens, then the next record's), so ``SEP term SEP`` matches each
    occurrence of the token once, never across two tokens or two records.
    """

    def __init__(self) -> None:
        super().__init__()
        self.lengths: list[int] = []
        self.total = 0
        self._texts: list[tuple[int, bytes, list[int]]] = []  # (first position, text, starts)
        self._post: dict[str, tuple[int, list[int], list[int]]] = {}  # term -> (texts, at, tfs)
        self._arrays: dict[str, tuple[int, Any, Any]] = {}  # term -> (count, positions, tfs)
        self._lengths: tuple[int, Any] = (0, None)

    def add(self, blobs: Sequence[bytes]) -> None:
        """Append records, each as its stored tokens (`terms.encode`)."""
        if not blobs:
            return
        base, lengths = len(self.lengths), self.lengths
        starts: list[int] = []
        off = 0
        for b in blobs:
            starts.append(off)  # where the record's first token's SEP stands
            if b:
                seps = b.count(SEP_B)
                lengths.append(seps + 1)
                off += len(b) + seps + 2
            else:
                lengths.append(0)
                off += 2
        self.total += sum(lengths[base:])
        text = SEP_B + SEP_B.join(blobs).replace(SEP_B, SEP_B + SEP_B) + SEP_B
        self._texts.append((base, text, starts))

    def postings(self, term: str) -> tuple[list[int], list[int]]:
        """The positions of the held records holding ``term``, ascending, and
        how often each holds it."""
        got = self._post.pop(term, None)
        done, at, tfs = got if got is not None else (0, [], [])
        if done < len(self._texts):
            pat = SEP_B + clean(term).encode("utf-8") + SEP_B
            for base, text, starts in self._texts[done:]:
                _occurrences(pat, text, starts, base, at, tfs)
        self._post[term] = (len(self._texts), at, tfs)  # most recent last
        while len(self._post) > MAX_TERMS:
            gone = next(iter(self._post))
            del self._post[gone]
            self._arrays.pop(gone, None)
        return at, tfs

    def df(self, term: str) -> int:
        """How many held records hold ``term``."""
        return len(self.postings(term)[0])

    def scores(self, query_terms: Sequence[str]) -> list[float]:
        """`keyword.bm25` of the held candidates, from the postings: the same
        arithmetic in the same order, so the very same floats."""
        scores = [0.0] * len(self.lengths)
        for i, v in self.sparse(query_terms).items():
            scores[i] = v
        return scores

    def sparse(self, query_terms: Sequence[str]) -> dict[int, float]:
        """The nonzero `scores`, by position (in first-match order)."""
        n = len(self.lengths)
        scores: dict[int, float] = {}
        terms = list(dict.fromkeys(query_terms))
        if not n or not terms:
            return scores
        avg = self.total / n or 1.0
        lengths = self.lengths
        for t in terms:
            at, tfs = self.postings(t)
            if not at:
                continue
            df = len(at)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for i, f in zip(at, tfs, strict=True):
                norm = K1 * (1 - B + B * lengths[i] / avg)
                scores[i] = scores.get(i, 0.0) + idf * f * (K1 + 1) / (f + norm)
        return scores

    def matches(self, query_terms: Sequence[str]) -> tuple[Any, Any]:
        """The nonzero `scores` as numpy arrays (positions ascending, scores):
        the same arithmetic, term by term in the same order, on arrays."""
        np = numpy_or_none()
        n = len(self.lengths)
        terms = list(dict.fromkeys(query_terms))
        if not n or not terms:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        avg = self.total / n or 1.0
        lengths = self._lengths_array(np, n)
        scores = np.zeros(n, dtype=np.float64)
        hit = np.zeros(n, dtype=bool)
        for t in terms:
            plist = self.postings(t)
            if not plist[0]:
                continue
            at, f = self._postings_arrays(np, t, plist)
            df = len(plist[0])
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            norm = K1 * (1 - B + B * lengths[at] / avg)
            scores[at] += idf * f * (K1 + 1) / (f + norm)
            hit[at] = True
        at = np.flatnonzero(hit)
        return at, scores[at]

    def _lengths_array(self, np: Any, n: int) -> Any:
        """`lengths` as a numpy array, extended by the records added since the last call."""
        done, arr = self._lengths
        if done != n:
            tail = np.asarray(self.lengths[done:], dtype=np.int64)
            arr = tail if arr is None else np.concatenate((arr, tail))
            self._lengths = (n, arr)
        return arr

    def _postings_arrays(
        self, np: Any, term: str, plist: tuple[list[int], list[int]]
    ) -> tuple[Any, Any]:
        """The term's postings as numpy arrays (positions, tfs), extended by the
        postings added since the last call (they only grow at their end)."""
        at_list, tf_list = plist
        got = self._arrays.get(term)
        done = 0 if got is None else got[0]
        if done != len(at_list):
            at = np.asarray(at_list[done:], dtype=np.int64)
            f = np.asarray(tf_list[done:], dtype=np.int64)
            if got is not None:
                at, f = np.concatenate((got[1], at)), np.concatenate((got[2], f))
            self._arrays[term] = (len(at_list), at, f)
            return at, f
        assert got is not None
        return got[1], got[2]


def _occurrences(
    pat: bytes, text: bytes, starts: list[int], base: int, at: list[int], tfs: list[int]
) -> None:
    """Append to ``at``/``tfs`` the records of ``text`` (numbered from ``base``)
    holding the token ``pat`` stands for, and how often each does."""
    pieces = text.split(pat)
    if len(pieces) == 1:
        return
    step, pos, last = len(pat), 0, -1
    for piece in pieces[:-1]:
        pos += len(piece)
        i = bisect_right(starts, pos) - 1 + base
        if i == last:
            tfs[-1] += 1
        else:
            at.append(i)
            tfs.append(1)
            last = i
        pos += step


class VectorIndex(_Held):
    """Unit vectors of one candidate set, as rows of a matrix that grows.

    With numpy the rows live only in the matrix; without it, as the list of
    per-record arrays the pure-Python dot product reads.
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim
        self.count = 0
        self.vecs: list[array[float]] = []  # without numpy only
        self._buf: Any = None  # numpy float32 (capacity, dim), rows [0, count) in use

    def add(self, vecs: Sequence[array[float] | bytes]) -> None:
        """Append rows: each item one record's float32 vector, or (with numpy)
        a block of consecutive records' vectors as one float32 buffer."""
        if not vecs:
            return
        np = numpy_or_none()
        if np is None:
            for v in vecs:
                flat = v if isinstance(v, array) else array("f", v)
                self.vecs += [flat[i : i + self.dim] for i in range(0, len(flat), self.dim)]
            self.count = len(self.vecs)
            return
        rows = np.frombuffer(b"".join(vecs), dtype=np.float32).reshape(-1, self.dim)
        n_old = self.count
        n = n_old + rows.shape[0]
        if self._buf is None and len(vecs) == 1 and n >= 64:
            # One block made whole (`RankCache.stored_block`): held as it is, read
            # only; the next rows go to a new buffer (this one has no room).
            self._buf, self.count = rows, n
            return
        if self._buf is None or self._buf.shape[0] < n:
            # Made to size at first (a new process's whole set), doubled as it grows.
            buf = np.empty((max(64, n if self._buf is None else 2 * n), self.dim), np.float32)
            if self._buf is not None:
                buf[:n_old] = self._buf[:n_old]
            self._buf = buf
        self._buf[n_old:n] = rows
        self.count = n

    def cosines(self, q: array[float]) -> list[float]:
        """`cache.cosines` of ``q`` with the held vectors (rounded alike)."""
        np = numpy_or_none()
        if np is None:
            return dot_python(q, self.vecs)
        if self.count < 64:  # (as `cache.cosines` does below 64)
            return dot_python(q, [array("f", r.tobytes()) for r in self.matrix()])
        scores: list[float] = self.cosine_array(q).tolist()
        return scores

    def cosine_array(self, q: array[float]) -> Any:
        """`cosines` as a numpy float64 array (numpy installed, at least one row)."""
        np = numpy_or_none()
        prod = self._buf[: self.count] @ np.frombuffer(q.tobytes(), dtype=np.float32)
        return np.round(prod.astype(np.float64), ROUND)

    def rows_cosines(self, q: array[float], rows: Any) -> Any:
        """`cosine_array` of the given rows only (a numpy int array)."""
        np = numpy_or_none()
        prod = self._buf[rows] @ np.frombuffer(q.tobytes(), dtype=np.float32)
        return np.round(prod.astype(np.float64), ROUND)

    def matrix(self) -> Any:
        """The held rows as a numpy float32 matrix (a view: read it under the lock)."""
        if self._buf is None:
            return numpy_or_none().zeros((0, self.dim), dtype="float32")
        return self._buf[: self.count]


Key = tuple[Hashable, str]
"""A state's candidate set (what identifies it: namespace, anchors, filters)
and the name of its tokenizer or embedder."""


class SearchStates:
    """The states of one store, the most recently used `MAX_STATES` kept.

    Each state has a lock of its own, held while it is brought up to date and
    read: searches of different candidate sets (another namespace, another
    anchor) never wait for each other, however many records one must add.

    A candidate set with no state of its own that was grown from the list
    another state holds (`candidates.Grown`: the answer at a new message,
    extended from the previous message's) takes that state over, under its
    own key, and appends the new records to it: in a chat the state follows
    the anchor from turn to turn instead of being made again each turn.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the table of states only
        self._states: dict[tuple[Any, ...], _Held] = {}

    def clear(self) -> None:
        with self._lock:
            self._states.clear()

    def _get(self, at: tuple[Any, ...], make: Callable[[], _Held], mems: Sequence[Memory]) -> _Held:
        with self._lock:
            st = self._states.pop(at, None)
            if st is None:
                st = self._donor(at, mems, take=True) or make()
            self._states[at] = st  # most recent last
            while len(self._states) > MAX_STATES:
                del self._states[next(iter(self._states))]
            return st

    def _donor(self, at: tuple[Any, ...], mems: Sequence[Memory], take: bool) -> _Held | None:
        """A state of the same kind (tokenizer or embedder, and dimension) under
        another key, holding the list ``mems`` was grown from (or ``mems``
        itself); taken out of the table when ``take``. The caller holds the
        table's lock; the state is checked again under its own before use."""
        base = getattr(mems, "base", None)
        kind = (at[0], at[1][1], at[2:])
        for k, st in self._states.items():
            held = st.source
            grown_from = held is not None and (held is mems or held is base)
            if grown_from and (k[0], k[1][1], k[2:]) == kind:
                if take:
                    del self._states[k]
                return st
        return None

    def unheld(self, key: Key, dim: int, mems: Sequence[Memory]) -> Sequence[Memory]:
        """The records of ``mems`` the vector state of ``key`` does not hold yet
        (all of them when it would be rebuilt): those a search must find vectors for."""
        at = ("vec", key, dim)
        with self._lock:
            st = self._states.get(at) or self._donor(at, mems, take=False)
        if st is None:
            return mems
        with st.lock:
            new = st.new_part(mems)
        return mems if new is None else new

    def _use(
        self,
        at: tuple[Any, ...],
        make: Callable[[], _Held],
        mems: Sequence[Memory],
        add: Callable[[Any, list[Memory]], None],
        use: Callable[[Any], T],
    ) -> T:
        st = self._get(at, make, mems)
        with st.lock:
            new = st.new_part(mems)
            if new is not None:
                if new:
                    add(st, new)
                    st.hold(new)
                st.source = mems
                return use(st)
        fresh = make()  # filled before any other search can see it
        with fresh.lock:
            everything = list(mems)
            add(fresh, everything)
            fresh.hold(everything)
            fresh.source = mems
            with self._lock:
                self._states.pop(at, None)
                self._states[at] = fresh
            return use(fresh)

    def with_keywords(
        self,
        key: Key,
        mems: Sequence[Memory],
        blobs_of: Callable[[Sequence[Memory]], list[bytes]],
        use: Callable[[KeywordIndex], T],
    ) -> T:
        """``use`` applied, under the state's lock, to the postings of ``mems``
        brought up to date."""
        return self._use(
            ("kw", key), KeywordIndex, mems, lambda st, new: st.add(blobs_of(new)), use
        )

    def with_vectors(
        self,
        key: Key,
        dim: int,
        mems: Sequence[Memory],
        vectors_of: Callable[[Sequence[Memory]], Sequence[array[float] | bytes]],
        use: Callable[[VectorIndex], T],
    ) -> T:
        """``use`` applied, under the state's lock, to the matrix of ``mems``
        brought up to date."""
        return self._use(
            ("vec", key, dim),
            lambda: VectorIndex(dim),
            mems,
            lambda st, new: st.add(vectors_of(new)),
            use,
        )

    def keyword_scores(
        self,
        key: Key,
        mems: Sequence[Memory],
        blobs_of: Callable[[Sequence[Memory]], list[bytes]],
        query_terms: Sequence[str],
    ) -> list[float]:
        """BM25 of each of ``mems`` for the query, from their postings, brought up
        to date first (``blobs_of`` gives the new records' stored tokens)."""
        return self.with_keywords(key, mems, blobs_of, lambda st: st.scores(query_terms))

    def cosines(
        self,
        key: Key,
        dim: int,
        mems: Sequence[Memory],
        vectors_of: Callable[[Sequence[Memory]], Sequence[array[float] | bytes]],
        q: array[float],
    ) -> list[float]:
        """Cosine of ``q`` with each of ``mems``, from their matrix, brought up to date."""
        return self.with_vectors(key, dim, mems, vectors_of, lambda st: st.cosines(q))
