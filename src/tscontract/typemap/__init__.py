"""The one type table: a contract type in each target's terms, and the readers back (#27 step 3).

:mod:`tscontract.typemap.table` holds the table, one row per contract type and one column per target;
the other modules render a :class:`~tscontract.contract.types.DataType` from it (``sql``, ``arrow``,
``avro``, ``protobuf``, ``jsonschema``, ``cel``, ``odcs``) or read a target's type back into contract
type text. Only :mod:`tscontract.typemap.arrow` imports pyarrow; the rest is plain data.
"""
