"""What the OpenAPI document says beyond the marshmallow fields: headers and typed unions.

An apispec plugin, so that every operation gets them as it is registered: `X-Request-Id` (taken on
every request, echoed on every answer, see service/ops/logs.py) and `Retry-After` on every 429.
Headers of one operation (`Location`, `ETag`, `Idempotency-Key`, `If-Match`) sit on its route.

The typed contract (service/api/action_event_schemas.py) adds the components the domain declares, a field
`OneOf` whose value is one of several component schemas, and schemas that describe themselves
(`openapi_schema`): a request body checked by the domain, or an answer dumped by its game's schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import marshmallow as ma
from apispec import APISpec, BasePlugin
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.openapi import OpenAPIConverter
from marshmallow import validate

from service.api import action_event_schemas as typed_schemas
from service.ops.logs import REQUEST_ID_HEADER, SANE_REQUEST_ID

REQUEST_ID = "RequestId"
RETRY_AFTER = "RetryAfter"
REQUEST_ID_REF = {"$ref": f"#/components/headers/{REQUEST_ID}"}
RETRY_AFTER_REF = {"$ref": f"#/components/headers/{RETRY_AFTER}"}
ETAG = {
    "description": 'the game\'s version in quotes, like "12": send it back as If-Match',
    "required": True,
    "schema": {"type": "string", "pattern": '^"[0-9]+"$'},
}
LOCATION = {
    "description": "the new game's path, /v1/games/{id}",
    "required": True,
    "schema": {"type": "string", "pattern": "^/v1/games/[A-Za-z0-9_-]+$"},
}


class HeadersPlugin(BasePlugin):
    """Declares `X-Request-Id` on every operation and answer and `Retry-After` on every 429."""

    def init_spec(self, spec: APISpec) -> None:
        """Register the shared headers and the request id parameter as components."""
        spec.components.header(
            REQUEST_ID,
            {
                "description": "the request's id: the client's X-Request-Id when sane, else a new one",
                "required": True,
                "schema": {"type": "string", "pattern": f"^{SANE_REQUEST_ID.pattern}$"},
            },
        )
        spec.components.header(
            RETRY_AFTER,
            {
                "description": "seconds until the client may try again",
                "required": True,
                "schema": {"type": "string", "pattern": "^[0-9]+$"},
            },
        )
        spec.components.parameter(
            REQUEST_ID,
            "header",
            {
                "name": REQUEST_ID_HEADER,
                "description": "an id for this request's log lines; a value of another form is replaced by a new id",
                "schema": {"type": "string", "pattern": f"^{SANE_REQUEST_ID.pattern}$"},
            },
        )

    def operation_helper(self, path: str | None = None, operations: Any = None, **kwargs: Any) -> None:
        """Add the request id to every operation and answer, and Retry-After to every 429."""
        for operation in (operations or {}).values():
            operation.setdefault("parameters", []).append(REQUEST_ID)
            for status, response in operation.get("responses", {}).items():
                if isinstance(response, dict):
                    declare_headers(response, retry_after=str(status) == "429")


def declare_headers(response: dict[str, Any], *, retry_after: bool = False) -> None:
    """Declare X-Request-Id (and Retry-After) on one response."""
    headers = response.setdefault("headers", {})
    headers[REQUEST_ID_HEADER] = dict(REQUEST_ID_REF)  # a copy each: the YAML shows no anchors
    if retry_after:
        headers["Retry-After"] = dict(RETRY_AFTER_REF)


Variant = str | type[ma.Schema]
"""A component: by its name (a generated one) or as a marshmallow schema (named by apispec)."""


class OneOf(ma.fields.Raw):
    """A value of one of several schemas, dumped as it is and documented as their union.

    `variants` by the value of the `discriminator` property that tells them apart (oneOf), or a
    list of them (anyOf); a single one is a plain reference.
    """

    def __init__(
        self, variants: Mapping[str, Variant] | Sequence[Variant], *, discriminator: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.variants = variants
        self.discriminator = discriminator

    def openapi(self, converter: OpenAPIConverter) -> dict[str, Any]:
        """The field's JSON schema: references to its variants, registered on the way."""
        return union_of(converter, self.variants, self.discriminator)


class Verbatim(ma.fields.List[Any]):
    """A list the service builds in the shape its items' schema documents: documented as a list of them, dumped as
    it is. For a long list of small objects, where dumping each through its schema costs more than making it (a
    1,000-deal match's games: two thirds of the time of `GET /v1/matches/{id}`)."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


class Either(ma.fields.Field[Any]):
    """An object of one of several schemas whose objects are closed, told apart by their keys: dumped
    through the first schema that declares all its keys and whose required fields it has, and
    documented as their oneOf (a replay's table is the public or, finished, the full one)."""

    def __init__(self, variants: Sequence[type[ma.Schema]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variants = tuple(variants)
        self._schemas: list[tuple[ma.Schema, set[str], set[str]]] = []

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        if value is None:
            return None
        if not self._schemas:
            for variant in self.variants:
                schema = variant()
                names = {field.data_key or name: field for name, field in schema.dump_fields.items()}
                self._schemas.append((schema, set(names), {key for key, field in names.items() if field.required}))
        keys = set(value)
        for schema, declared, required in self._schemas:
            if required <= keys <= declared:
                return schema.dump(value)
        raise ValueError(f"none of {[v.__name__ for v in self.variants]} has exactly the fields {sorted(keys)}")

    def openapi(self, converter: OpenAPIConverter) -> dict[str, Any]:
        """oneOf the variants."""
        return {"oneOf": [union_of(converter, [variant]) for variant in self.variants]}


def union_of(
    converter: OpenAPIConverter, variants: Mapping[str, Variant] | Sequence[Variant], discriminator: str | None = None
) -> dict[str, Any]:
    """The JSON schema of a union of components (see OneOf)."""

    def named(variant: Variant) -> str:
        if isinstance(variant, str):
            return variant
        reference: dict[str, str] = converter.resolve_nested_schema(variant)  # type: ignore[no-untyped-call]
        return reference["$ref"].rsplit("/", 1)[1]

    if isinstance(variants, Mapping):
        assert discriminator is not None, "a mapping of variants needs the property that tells them apart"
        return typed_schemas.union({value: named(variant) for value, variant in variants.items()}, discriminator)
    names = [named(variant) for variant in variants]
    if len(names) == 1:
        return typed_schemas.ref(names[0])
    return {"anyOf": [typed_schemas.ref(name) for name in names]}


class Named(ma.fields.String):
    """A string of a named kind: documented once, as the component `name` with the JSON schema `schema`, and
    referenced wherever it occurs, so that every schema has the same one. Its validators are its own: the
    document says what it may be, they say what it is now (a bot level of a plug-in, say)."""

    def __init__(self, name: str, schema: Mapping[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.component = name
        self.schema = dict(schema)


class Enum(Named):
    """A string of a named set of values (see Named)."""

    def __init__(self, name: str, choices: Sequence[str], **kwargs: Any) -> None:
        super().__init__(name, {"type": "string", "enum": list(choices)}, validate=validate.OneOf(choices), **kwargs)


def _enum_property(
    converter: OpenAPIConverter, field: ma.fields.Field[Any], ret: dict[str, Any], **_: Any
) -> dict[str, Any]:
    """apispec attribute function: a Named field (an Enum) refers to its component, registered at first use."""
    if not isinstance(field, Named):
        return {}
    schema = field.schema
    for key in schema:
        if key != "description":  # the field's own stays beside the reference
            ret.pop(key, None)
    known = converter.spec.components.schemas.get(field.component)
    if known is None:
        converter.spec.components.schema(field.component, dict(schema))
    assert known in (None, schema), f"{field.component} has other values elsewhere: {known} and {schema}"
    return typed_schemas.ref(field.component)


def _one_of_property(
    converter: OpenAPIConverter, field: ma.fields.Field[Any], ret: dict[str, Any], **_: Any
) -> dict[str, Any]:
    """apispec attribute function: the JSON schema of a OneOf or Either field."""
    if not isinstance(field, OneOf | Either):
        return {}
    ret.pop("type", None)  # a Raw field has none; allow_none would have made it ["null"]
    schema = field.openapi(converter)
    return typed_schemas.nullable(schema) if field.allow_none else schema


class TypedConverter(OpenAPIConverter):
    """apispec's converter, for schemas that describe themselves with `openapi_schema(converter)`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for attribute in (_one_of_property, _enum_property):
            self.add_attribute_function(attribute)  # type: ignore[no-untyped-call]

    def schema2jsonschema(self, schema: Any) -> dict[str, Any]:
        describe: Callable[[OpenAPIConverter], dict[str, Any]] | None = getattr(schema, "openapi_schema", None)
        if describe is not None:
            return describe(self)
        described: dict[str, Any] = super().schema2jsonschema(schema)  # type: ignore[no-untyped-call]
        return described


class TypedMarshmallowPlugin(MarshmallowPlugin):
    """The marshmallow plugin with TypedConverter; registers the components the domain declares."""

    Converter = TypedConverter

    def init_spec(self, spec: APISpec) -> None:
        super().init_spec(spec)
        for name, component in typed_schemas.components().items():
            spec.components.schema(name, component)
