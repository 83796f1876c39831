"""The reference page of part 1: a plain Flask + SQLAlchemy + Jinja app listing 50 rows of a SQLite table (ORM
objects, autoescaped template, a base layout), served by gunicorn beside Gambit. What a page showing as much as
Gambit's bid list costs with nothing of Gambit's own around it (`gunicorn 'bench.reference:make_app()'`)."""

from __future__ import annotations

import os
from decimal import Decimal

from flask import Flask, render_template_string
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import Numeric, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ROWS = 50

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Rows</title></head><body>
<header><nav><a href="/">Home</a> <a href="/rows">Rows</a></nav></header><main><h1>Rows</h1>
<table><thead><tr><th>#</th><th>Name</th><th>City</th><th>Amount</th><th>Status</th></tr></thead><tbody>
{% for r in rows %}<tr><td><a href="/rows/{{ r.id }}">{{ r.id }}</a></td><td>{{ r.name }}</td><td>{{ r.city }}</td>
<td>{{ r.amount }}</td><td>{{ r.status }}</td></tr>{% endfor %}</tbody></table></main></body></html>"""


class Base(DeclarativeBase):
    pass


db = SQLAlchemy(model_class=Base)


class Row(db.Model):
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    city: Mapped[str] = mapped_column(String(200))
    amount: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    status: Mapped[str] = mapped_column(String(20))


def make_app() -> Flask:
    app = Flask(__name__)
    app.config["SQLALCHEMY_DATABASE_URI"] = os.environ["BENCH_REFERENCE_DB"]
    db.init_app(app)
    with app.app_context():
        db.create_all()
        if db.session.scalar(select(db.func.count(Row.id))) == 0:
            db.session.add_all(Row(name=f"Chess Federation {i}", city=f"City {i}", amount=Decimal("200000.00") + i,
                                   status="submitted") for i in range(ROWS))
            db.session.commit()

    @app.get("/healthz")
    def healthz():
        return "ok"

    @app.get("/rows")
    def rows():
        return render_template_string(PAGE, rows=db.session.scalars(select(Row).order_by(Row.id)).all())

    return app
