"""A SQLAlchemy 2.0 ORM application run against a server: run by tests/applications.rs against
onelog and against MariaDB 10.11, which compares the two printed documents exactly.

Usage: sqlalchemy_app.py URL
URL is a SQLAlchemy URL (mysql+pymysql://...) whose database exists and is empty. Prints one
JSON line per step: its name and result (rows as lists of JSON values, Decimals and dates
as text), so the Rust side compares text. A Python exception fails the run (exit status 1, the
traceback on stderr).
"""
import datetime
import decimal
import json
import sys

from sqlalchemy import (
    Column,
    DateTime,
    ForeignKey,
    Index,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    delete,
    exists,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    joinedload,
    mapped_column,
    relationship,
    selectinload,
)

RESULTS = []

# The models' foreign keys: ON DELETE CASCADE, so the ORM leaves deletes of children to the
# server (passive_deletes) and the Core delete of an author cascades to its posts, comments
# and tags. "RESTRICT" runs the scenario with the ORM deleting children itself instead.
ONDELETE = "CASCADE"
PASSIVE = ONDELETE == "CASCADE"


def plain(v):
    """A JSON-able form of a column value."""
    if isinstance(v, decimal.Decimal):
        return "D" + str(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in sorted(v.items())}
    return v


def record(step, value):
    RESULTS.append([step, plain(value)])


def rows(result):
    return [list(r) for r in result]


class Base(DeclarativeBase):
    pass


post_tags = Table(
    "post_tags",
    Base.metadata,
    Column("post_id", ForeignKey("posts.id", ondelete=ONDELETE), primary_key=True),
    Column("tag_id", ForeignKey("tags.id", ondelete=ONDELETE), primary_key=True),
)


class Author(Base):
    __tablename__ = "authors"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(50), unique=True)
    email: Mapped[str | None] = mapped_column(String(120))
    joined: Mapped[datetime.datetime] = mapped_column(DateTime)
    posts: Mapped[list["Post"]] = relationship(
        back_populates="author", cascade="all, delete-orphan", passive_deletes=PASSIVE,
        order_by="Post.id")


class Post(Base):
    __tablename__ = "posts"
    __table_args__ = (
        Index("ix_posts_author_title", "author_id", "title"),
        UniqueConstraint("author_id", "slug", name="uq_posts_author_slug"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id", ondelete=ONDELETE))
    title: Mapped[str] = mapped_column(String(100))
    slug: Mapped[str] = mapped_column(String(100))
    body: Mapped[str | None] = mapped_column(Text)
    score: Mapped[decimal.Decimal] = mapped_column(Numeric(8, 2), default=0)
    author: Mapped[Author] = relationship(back_populates="posts")
    tags: Mapped[list["Tag"]] = relationship(secondary=post_tags, back_populates="posts",
                                             order_by="Tag.id")
    comments: Mapped[list["Comment"]] = relationship(
        back_populates="post", cascade="all, delete-orphan", passive_deletes=PASSIVE,
        order_by="Comment.id")


class Tag(Base):
    __tablename__ = "tags"
    id: Mapped[int] = mapped_column(primary_key=True)
    label: Mapped[str] = mapped_column(String(30), unique=True)
    posts: Mapped[list[Post]] = relationship(secondary=post_tags, back_populates="tags",
                                             order_by="Post.id")


class Comment(Base):
    __tablename__ = "comments"
    id: Mapped[int] = mapped_column(primary_key=True)
    post_id: Mapped[int] = mapped_column(ForeignKey("posts.id", ondelete=ONDELETE), index=True)
    text: Mapped[str] = mapped_column(String(200))
    votes: Mapped[int] = mapped_column(default=0)
    post: Mapped[Post] = relationship(back_populates="comments")


def populate(engine):
    with Session(engine) as s:
        t0 = datetime.datetime(2026, 1, 2, 3, 4, 5)
        authors = [Author(name=f"author{i}", email=None if i == 3 else f"a{i}@example.com",
                          joined=t0 + datetime.timedelta(days=i)) for i in range(1, 5)]
        s.add_all(authors)
        tags = [Tag(label=lbl) for lbl in ["rust", "sql", "python", "db", "misc"]]
        s.add_all(tags)
        s.flush()
        record("authors.ids", [a.id for a in authors])
        record("tags.ids", [t.id for t in tags])
        n = 0
        for a in authors:
            for j in range(a.id + 1):
                n += 1
                p = Post(author=a, title=f"post {n:02d} by {a.name}", slug=f"p{j}",
                         body=None if n % 4 == 0 else "x" * n,
                         score=decimal.Decimal(n * 7 % 10) + decimal.Decimal("0.25"))
                p.tags = [tags[k] for k in range(5) if (n + k) % 3 == 0]
                p.comments = [Comment(text=f"c{n}.{c}", votes=(n * c) % 5)
                              for c in range(n % 3)]
                s.add(p)
        s.commit()
        record("posts.count", s.scalar(select(func.count()).select_from(Post)))


def core_inserts(engine):
    """Core executemany inserts; MariaDB >= 10.5 gets INSERT ... RETURNING for bulk ORM
    inserts, which this exercises with insert().returning()."""
    with engine.begin() as c:
        res = c.execute(insert(Tag).returning(Tag.id, Tag.label),
                        [{"label": "extra1"}, {"label": "extra2"}])
        record("insert.returning", rows(res))
        res = c.execute(insert(Tag).values(label="extra3"))
        record("insert.lastrowid", list(res.inserted_primary_key))
    with Session(engine) as s:
        s.execute(insert(Comment), [{"post_id": 1, "text": "bulk1", "votes": 9},
                                    {"post_id": 2, "text": "bulk2", "votes": 8}])
        got = s.scalars(insert(Comment).returning(Comment),
                        [{"post_id": 3, "text": "bulk3", "votes": 7},
                         {"post_id": 3, "text": "bulk4", "votes": 6}]).all()
        record("orm.bulk.returning", [[c.id, c.post_id, c.text] for c in got])
        s.commit()


def queries(engine):
    with Session(engine) as s:
        q = select(Author).options(joinedload(Author.posts)).order_by(Author.id)
        record("joinedload", [[a.name, [p.title for p in a.posts]]
                              for a in s.scalars(q).unique()])
        s.expunge_all()
        q = select(Post).options(selectinload(Post.tags), selectinload(Post.comments)) \
            .order_by(Post.id)
        record("selectinload", [[p.id, [t.label for t in p.tags], [c.text for c in p.comments]]
                                for p in s.scalars(q)])
        q = select(Post.id, Post.title).where(Post.body.is_(None)).order_by(Post.id.desc())
        record("filter.is_null", rows(s.execute(q)))
        q = select(Post.id).where(Post.title.like("%author2%"), Post.score > 2) \
            .order_by(Post.id).limit(3).offset(1)
        record("filter.like.limit.offset", rows(s.execute(q)))
        q = select(Post.id).where(Post.id.in_([1, 3, 5, 99]) | Post.slug.startswith("p4")) \
            .order_by(Post.id)
        record("filter.in.or", rows(s.execute(q)))
        q = select(Author.name, func.count(Post.id), func.sum(Post.score), func.max(Post.title)) \
            .join(Post).group_by(Author.id, Author.name).having(func.count(Post.id) > 2) \
            .order_by(Author.name)
        record("group_by.having", rows(s.execute(q)))
        q = select(Tag.label, func.count(post_tags.c.post_id).label("n")) \
            .outerjoin(post_tags).group_by(Tag.label).order_by(func.count(post_tags.c.post_id)
                                                                .desc(), Tag.label)
        record("outerjoin.group_by", rows(s.execute(q)))
        sub = select(Comment.post_id, func.sum(Comment.votes).label("v")) \
            .group_by(Comment.post_id).subquery()
        q = select(Post.id, sub.c.v).join(sub, sub.c.post_id == Post.id) \
            .where(sub.c.v > 1).order_by(Post.id)
        record("subquery.join", rows(s.execute(q)))
        q = select(Author.name).where(
            exists().where(Post.author_id == Author.id, Post.body.is_(None))).order_by(Author.id)
        record("exists", rows(s.execute(q)))
        q = select(Author.name).where(~Author.posts.any(Post.score > 5)).order_by(Author.id)
        record("not.any", rows(s.execute(q)))
        q = select(Post.id).where(Post.id.in_(select(Comment.post_id).where(Comment.votes >= 3))) \
            .order_by(Post.id)
        record("in.subquery", rows(s.execute(q)))
        scalar_sub = select(func.count(Comment.id)).where(Comment.post_id == Post.id) \
            .scalar_subquery()
        q = select(Post.id, scalar_sub.label("nc")).order_by(scalar_sub.desc(), Post.id).limit(5)
        record("scalar_subquery", rows(s.execute(q)))
        q = select(func.avg(Post.score), func.min(Post.score), func.count(func.distinct(
            Post.author_id)), func.coalesce(func.sum(Comment.votes), 0)) \
            .select_from(Post).outerjoin(Comment)
        record("aggregates", rows(s.execute(q)))
        record("get", [s.get(Author, 2).name, s.get(Author, 42)])


def changes(engine):
    with Session(engine) as s:
        a = s.scalars(select(Author).where(Author.name == "author1")).one()
        a.email = "new@example.com"
        a.posts[0].tags.append(s.get(Tag, 5))
        s.commit()
        res = s.execute(update(Post).where(Post.author_id == 2).values(score=Post.score + 1))
        record("update.rowcount", res.rowcount)
        res = s.execute(update(Comment).where(Comment.votes == 0).values(votes=Comment.votes - 1)
                        .execution_options(synchronize_session=False))
        record("update.negative", res.rowcount)
        s.commit()
        p = s.get(Post, 4)
        s.delete(p)
        s.commit()
        record("orm.delete.cascade", rows(s.execute(
            select(Comment.id).where(Comment.post_id == 4))) +
            rows(s.execute(select(post_tags.c.tag_id).where(post_tags.c.post_id == 4))))
        # A server-side ON DELETE CASCADE: Core delete of an author with posts, comments, tags.
        if ONDELETE == "RESTRICT":
            try:
                s.execute(delete(Author).where(Author.name == "author3"))
            except IntegrityError as e:
                record("core.delete.restrict", e.orig.args[0])
            s.rollback()
            posts3 = s.scalars(select(Post.id).join(Author).where(Author.name == "author3")).all()
            s.execute(delete(post_tags).where(post_tags.c.post_id.in_(posts3)))
            s.execute(delete(Comment).where(Comment.post_id.in_(posts3)))
            s.execute(delete(Post).where(Post.id.in_(posts3)))
        res = s.execute(delete(Author).where(Author.name == "author3"))
        record("core.delete.rowcount", res.rowcount)
        s.commit()
        record("after.cascade", [
            s.scalar(select(func.count()).select_from(Post)),
            s.scalar(select(func.count()).select_from(Comment)),
            s.scalar(select(func.count()).select_from(post_tags)),
        ])
        try:
            with s.begin_nested():
                s.add(Tag(label="rust"))
                s.flush()
        except Exception as e:  # noqa: BLE001 - the duplicate key is the point
            record("savepoint.duplicate", [type(e).__name__, e.orig.args[0]])
        s.add(Tag(label="kept"))
        s.commit()
        record("tags.after", rows(s.execute(select(Tag.id, Tag.label).order_by(Tag.id))))
        record("final.posts", rows(s.execute(select(Post.id, Post.author_id, Post.score)
                                              .order_by(Post.id))))


def reflection(engine):
    md = MetaData()
    md.reflect(bind=engine)
    record("reflect.tables", sorted(md.tables))
    for name in sorted(Base.metadata.tables):
        model = Base.metadata.tables[name]
        got = md.tables[name]
        record(f"reflect.{name}.columns", [
            [c.name, str(c.type), c.nullable, c.primary_key, c.autoincrement is True,
             sorted(f.target_fullname for f in c.foreign_keys)] for c in got.columns])
        record(f"reflect.{name}.matches_model", [
            [c.name for c in got.columns] == [c.name for c in model.columns],
            [c.name for c in got.primary_key] == [c.name for c in model.primary_key],
        ])
        record(f"reflect.{name}.fks", sorted(
            [fk.name is not None, [e.parent.name for e in fk.elements], fk.referred_table.name,
             fk.ondelete] for fk in got.foreign_key_constraints))
    insp = inspect(engine)
    for name in sorted(Base.metadata.tables):
        record(f"inspect.{name}.indexes", sorted(
            [i["name"], i["column_names"], i["unique"]] for i in insp.get_indexes(name)))
        record(f"inspect.{name}.unique", sorted(
            [u["name"], u["column_names"]] for u in insp.get_unique_constraints(name)))
        record(f"inspect.{name}.pk", insp.get_pk_constraint(name)["constrained_columns"])
    record("has_table", [insp.has_table("posts"), insp.has_table("nope")])


def main():
    engine = create_engine(sys.argv[1], future=True)
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    record("server.is_mariadb", engine.dialect.is_mariadb)
    record("dialect.insert_returning", engine.dialect.insert_returning)
    populate(engine)
    core_inserts(engine)
    queries(engine)
    changes(engine)
    reflection(engine)
    Base.metadata.drop_all(engine)
    with engine.connect() as c:
        record("dropped", rows(c.exec_driver_sql("SHOW TABLES")))
    for step in RESULTS:
        print(json.dumps(step))


if __name__ == "__main__":
    main()
