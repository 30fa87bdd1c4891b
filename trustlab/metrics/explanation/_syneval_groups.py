"""Syneval template groups for Ding & Koehn's input consistency test (NAACL 2021, Section 3.2;
Table 4a).

Syneval (Marvin & Linzen 2018) is generated from templates: each section of the test file
fills one construction with different nouns and verbs, so the saliency of its sentences should
agree (input consistency). The released evaluation (``scripts/faithfulness/input-number`` of
shuoyangd/tarsius) splits the 6,280 saliency lines into the 24 sections of
``syneval_section_split_list`` by their line counts, concatenates the animate and inanimate
halves of each object-relative construction (in file-name order, as the shell glob does) into
eight groups, adds the two sentential-complement and the two subject-relative sections, and
leaves out the four prepositional sections: 12 groups, each compared with its first line.
"""
from __future__ import annotations

import numbers
from typing import Sequence

from trustlab._validation import Interval, validate_params

__all__ = ["SYNEVAL_SECTIONS", "syneval_template_groups"]

#: (line count, section file) in the order of the test file (``syneval_section_split_list``)
SYNEVAL_SECTIONS: tuple[tuple[int, str], ...] = (
    (400, "obj_rel_across_anim.pickle.plur_MS_MV_sing_ES_EV"),
    (400, "obj_rel_across_anim.pickle.sing_MS_MV_plur_ES_EV"),
    (360, "obj_rel_across_inanim.pickle.plur_IS_IV_sing_ES_EV"),
    (360, "obj_rel_across_inanim.pickle.sing_IS_IV_plur_ES_EV"),
    (400, "obj_rel_no_comp_across_anim.pickle.plur_MS_MV_sing_ES_EV"),
    (400, "obj_rel_no_comp_across_anim.pickle.sing_MS_MV_plur_ES_EV"),
    (360, "obj_rel_no_comp_across_inanim.pickle.plur_IS_IV_sing_ES_EV"),
    (360, "obj_rel_no_comp_across_inanim.pickle.sing_IS_IV_plur_ES_EV"),
    (100, "obj_rel_no_comp_within_anim.pickle.plur_ES_EV_sing_MS_MV"),
    (100, "obj_rel_no_comp_within_anim.pickle.sing_ES_EV_plur_MS_MV"),
    (90, "obj_rel_no_comp_within_inanim.pickle.plur_ES_EV_sing_IS_IV"),
    (90, "obj_rel_no_comp_within_inanim.pickle.sing_ES_EV_plur_IS_IV"),
    (100, "obj_rel_within_anim.pickle.plur_ES_EV_sing_MS_MV"),
    (100, "obj_rel_within_anim.pickle.sing_ES_EV_plur_MS_MV"),
    (90, "obj_rel_within_inanim.pickle.plur_ES_EV_sing_IS_IV"),
    (90, "obj_rel_within_inanim.pickle.sing_ES_EV_plur_IS_IV"),
    (600, "prep_anim.pickle.plur_MS_MV_sing_ES"),
    (600, "prep_anim.pickle.sing_MS_MV_plur_ES"),
    (180, "prep_inanim.pickle.plur_IS_IV_sing_ES"),
    (180, "prep_inanim.pickle.sing_IS_IV_plur_ES"),
    (60, "sent_comp.pickle.plur_MS_MV_sing_BS"),
    (60, "sent_comp.pickle.sing_MS_MV_plur_BS"),
    (400, "subj_rel.pickle.plur_MS_EV_MV_sing_ES"),
    (400, "subj_rel.pickle.sing_MS_EV_MV_plur_ES"),
)

_OBJ_REL = ("obj_rel_across", "obj_rel_no_comp_across", "obj_rel_no_comp_within", "obj_rel_within")


@validate_params({"sections": ["array-like"], "n_lines": [Interval(numbers.Integral, 1, None, closed="left"), None],
                  "include_prep": ["boolean"]})
def syneval_template_groups(
    sections: Sequence[tuple[int, str]] = SYNEVAL_SECTIONS,
    *,
    n_lines: int | None = 6280,
    include_prep: bool = False,
) -> list[list[int]]:
    """Group Syneval lines by template, as the released ``evaluate_faithfulness_syneval.sh`` does.

    Parameters
    ----------
    sections : sequence of (line count, name)
        The consecutive sections of the test file (default: Syneval's 24, 6,280 lines). A
        name is ``<construction>_<anim|inanim>.pickle.<first>_..._<second>_...`` for the
        object relatives (their animate and inanimate halves are concatenated, animate first,
        into one group per construction and number order) or any other name (its own group).
    n_lines : int, optional
        Check that the sections cover exactly this many lines (the saliency file's).
    include_prep : bool
        Also keep the prepositional sections (``prep_*``), which the released script drops.

    Returns
    -------
    list of list of int
        Line indices per group, reference (the group's first line) first: 12 groups with
        the defaults — 8 object-relative groups (construction × singular→plural /
        plural→singular), 2 sentential-complement and 2 subject-relative sections.

    Notes
    -----
    With the released Transformer + SmoothGrad saliency this gives mean clamped Pearson
    0.528 (``verum``) and 0.534 (``malum``), not Table 4a's 0.604 / 0.627: following the
    released scripts does not reproduce the paper's Syneval cells (the Winobias cells,
    :func:`winobias_template_groups`, are reproduced exactly). Unresolved; possibly a
    different saliency file.

    Examples
    --------
    >>> from trustlab.metrics.explanation import load_ding_koehn, input_consistency
    >>> g = syneval_template_groups()
    >>> len(g), [len(x) for x in g][:2]
    (12, [760, 760])
    >>> d = load_ding_koehn("number", "sota")
    >>> round(input_consistency(d.verum, g).value, 3), round(input_consistency(d.malum, g).value, 3)
    (0.528, 0.534)
    """
    secs = []
    start = 0
    for k, item in enumerate(sections):
        try:
            count, name = int(item[0]), str(item[1])
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"sections[{k}] must be a (line count, name) pair; got {item!r}.") from None
        if count < 1:
            raise ValueError(f"sections[{k}] has {count} lines; counts must be >= 1.")
        secs.append((name, start, start + count))
        start += count
    if n_lines is not None and start != n_lines:
        raise ValueError(f"the sections cover {start} lines but n_lines is {n_lines}; they must match the "
                         "saliency file line for line.")
    groups: dict[str, list[int]] = {}
    order: list[str] = []

    def add(key, lo, hi):
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].extend(range(lo, hi))

    for name, lo, hi in sorted(secs, key=lambda s: s[0]):  # the shell glob's (file-name) order
        base, _, numbers_ = name.partition(".pickle.")
        construction = base.rsplit("_", 1)[0] if base.endswith(("_anim", "_inanim")) else base
        if construction in _OBJ_REL:
            first = numbers_.split("_", 1)[0]
            add(f"{construction}.{'plur_sing' if first == 'sing' else 'sing_plur'}", lo, hi)
        elif base.startswith("prep") and not include_prep:
            continue
        else:
            add(name, lo, hi)
    # the released evaluation's order: obj_rel groups (plur_sing before sing_plur), then the rest
    rank = {c: i for i, c in enumerate(("obj_rel_across", "obj_rel_no_comp_across", "obj_rel_no_comp_within",
                                        "obj_rel_within"))}

    def key(k):
        c, _, rest = k.partition(".")
        return (0, rank[c], rest) if c in rank else (1, 0, k)

    return [groups[k] for k in sorted(order, key=key)]
