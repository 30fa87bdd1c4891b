"""Which inferred fields carry identity: field relevance by leave-one-field-out agreement.

Real files carry columns that say nothing about which entity a record is: row numbers,
export timestamps, sparse notes, a free-text comment about something else. Compared as
fields they cost more than time: they enter the whole-record comparison and the blocking,
and Fellegi-Sunter's EM can even elect "agrees on the notes" as its match class. This
module judges every inferred field by **evidence from the other fields**, before anything
is blocked or fitted (so nothing a noise column contaminated is read):

* the pairs that agree exactly on another field ``g`` (its normalised value; for stacked
  tables linked to each other, pairs across the tables) are enriched in matches whenever
  ``g`` carries identity;
* a field ``f`` that carries identity agrees more often, and is more similar, on those pairs
  than on random record pairs; a field that carries none agrees on them as on random pairs,
  whatever ``g`` is.

:func:`judge_fields` measures, for every field ``f`` and every other field ``g``, the gain
of ``f``'s agreement on ``g``'s pairs over random pairs (a gain relative to what random pairs
leave, ``(a - r) / (1 - r)``, of its exact level and of its similarity) and whether it is
significant (a z-score). A field with a significant gain on some other field's pairs is
*relevant*. A field is called **noise** only when

1. there are *strong conditioners*: fields of rare values (random pairs share one less than
   2 % of the time, :data:`MAX_CONDITIONER_AGREEMENT`; a city's or a cuisine's pairs are hardly
   enriched in matches, and what other fields gain on them is how attributes go together)
   on whose pairs the relevant fields gain at least :data:`MIN_STRENGTH`;
2. ``f`` has enough evidence on their pairs (both values present on :data:`MIN_EVIDENCE`);
3. on those pairs its gain, even at its upper confidence bound, is below a quarter
   (:data:`NOISE_SHARE`) of the gain the relevant fields show there: how enriched in matches
   the pairs are sets how large a gain identity can show.

Where no single field's pairs are enriched enough for this (tables of few duplicates, whose
pairs agreeing on one name are mostly namesakes), a **second pass** judges the fields the first
left undecided on *likely matches*: the pairs that agree on a conjunction of two or three other
fields. How enriched in matches they are is measured without labels by the conjunction's
*excess share* ``1 - E/O`` (``O`` the pairs that agree on all its fields, ``E`` the pairs that
would if the fields agreed independently): matches agree on their identity fields together,
chance does not. On every conjunction whose excess share is at least :data:`MIN_EXCESS`, an
identity field agrees far more than on random pairs; a field whose gain there (at its upper
bound) stays below :data:`CONJUNCTION_NOISE_SHARE` of the excess share on all of them is noise.
One conjunction on which it gains keeps it (fields that go together without being identity, a
street and its city, can make a conjunction look strong).

A field too sparse for this (present on both records of too few pairs) is judged the other
way round: are the pairs that agree on it more alike in the relevant fields than random pairs
(compared with what the strong conditioners' pairs show)? A field that random pairs mostly
agree on (a near-constant flag, a missing-value marker) or whose comparison sees no two values
as equal is not judged: it cannot mislead. Where the evidence is missing (a one-field file:
the only real field and a noise column cannot be told apart by their values; small tables of
few duplicates), nothing is dropped.

Two *shapes* are suspect from the start (:func:`suspect_shape`): a running counter (each
table's values are the consecutive integers ``k .. k+n-1``, so the tables share numbers that
say nothing) and a timestamp with a time of day that varies (an export or modification time).
A suspect field is dropped unless the evidence shows it carries identity (a counter of two
tables aligned row by row would).

All of this is heuristic: the thresholds (:data:`MIN_GAIN`, :data:`MIN_Z`, :data:`MIN_PAIRS`,
:data:`NOISE_SHARE`, :data:`MIN_STRENGTH`, :data:`MAX_CONDITIONER_AGREEMENT`, :data:`MIN_EXCESS`,
:data:`CONJUNCTION_NOISE_SHARE`) were chosen on the
real files of ``bench/er_real.py`` and their ``extra`` presentation
(``bench/er_perturb.py``), and the test reads a sample (:data:`MAX_RECORDS` records).
"""
from __future__ import annotations

from trustlab.er.fields import (  # noqa: F401  (the code is part of the fields stage)
    CONJUNCTION_NOISE_SHARE,
    MAX_CONDITIONER_AGREEMENT,
    MAX_CONJUNCTION,
    MAX_CONJUNCTION_FIELDS,
    MAX_PAIRS,
    MAX_RANDOM_AGREEMENT,
    MAX_RECORDS,
    MAX_TOTAL_PAIRS,
    MIN_EVIDENCE,
    MIN_EXCESS,
    MIN_GAIN,
    MIN_PAIRS,
    MIN_STRENGTH,
    MIN_Z,
    NOISE_SHARE,
    PAIRS_PER_VALUE,
    ROUNDS,
    FieldEvidence,
    judge_fields,
    suspect_shape,
)

__all__ = ["FieldEvidence", "judge_fields", "suspect_shape"]
