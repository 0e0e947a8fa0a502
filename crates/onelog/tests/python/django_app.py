"""A Django 5 project run against a server: run by tests/applications.rs against onelog and
against MariaDB 10.11, which compares the two printed documents exactly.

Usage: django_app.py WORKDIR HOST PORT UNIX_SOCKET DATABASE
WORKDIR is an empty directory where the script writes its app (models, admin) and the
migrations `makemigrations` generates; HOST/PORT or UNIX_SOCKET (give "-" for the unused one)
reach a server where DATABASE exists and is empty and root logs in without a password.
Django talks to the server through PyMySQL (`pymysql.install_as_MySQLdb()`).

Prints one JSON line per step: its name and result (Decimals and dates as text; the
auto_now/auto_now_add timestamps only as comparisons, since they are the wall clock). A Python
exception fails the run (exit status 1, the traceback on stderr).
"""
import datetime
import decimal
import io
import json
import os
import sys
import textwrap

import pymysql

pymysql.install_as_MySQLdb()

MODELS = '''
from django.db import models


class Publisher(models.Model):
    name = models.CharField(max_length=100, unique=True)
    country = models.CharField(max_length=2, db_index=True)

    def __str__(self):
        return self.name


class Author(models.Model):
    name = models.CharField(max_length=100)
    birth = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Book(models.Model):
    GENRES = [("novel", "Novel"), ("poetry", "Poetry"), ("essay", "Essay")]
    title = models.CharField(max_length=200)
    publisher = models.ForeignKey(Publisher, on_delete=models.CASCADE, related_name="books")
    authors = models.ManyToManyField(Author, related_name="books")
    price = models.DecimalField(max_digits=8, decimal_places=2)
    pages = models.IntegerField(default=0)
    genre = models.CharField(max_length=20, choices=GENRES)
    published = models.DateField()
    in_print = models.BooleanField(default=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        unique_together = [("publisher", "title")]
        indexes = [models.Index(fields=["genre", "published"], name="book_genre_pub_idx")]

    def __str__(self):
        return self.title


class Review(models.Model):
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="reviews")
    rating = models.PositiveSmallIntegerField()
    text = models.TextField(blank=True)
    reviewer = models.ForeignKey("auth.User", null=True, on_delete=models.SET_NULL)
    meta = models.JSONField(default=dict)
'''

ADMIN = '''
from django.contrib import admin

from .models import Book


@admin.register(Book)
class BookAdmin(admin.ModelAdmin):
    list_display = ["title", "publisher", "genre", "price", "in_print"]
    list_filter = ["genre", "in_print", "publisher"]
    search_fields = ["title", "publisher__name", "authors__name"]
    list_select_related = ["publisher"]
    ordering = ["title"]
    list_per_page = 3
'''

URLS = '''
from django.contrib import admin
from django.urls import path

urlpatterns = [path("admin/", admin.site.urls)]
'''

RESULTS = []


def plain(v):
    """A JSON-able form of a value."""
    if isinstance(v, decimal.Decimal):
        return "D" + str(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in sorted(v.items())}
    return v


def record(step, value):
    RESULTS.append([step, plain(value)])


def write_project(workdir):
    app = os.path.join(workdir, "shop")
    os.makedirs(os.path.join(app, "migrations"), exist_ok=True)
    for name, text in [("__init__.py", ""), ("models.py", MODELS), ("admin.py", ADMIN),
                       ("migrations/__init__.py", "")]:
        with open(os.path.join(app, name), "w") as f:
            f.write(textwrap.dedent(text))
    with open(os.path.join(workdir, "shop_urls.py"), "w") as f:
        f.write(URLS)
    sys.path.insert(0, workdir)


def configure(host, port, socket, database):
    from django.conf import settings

    db = {"ENGINE": "django.db.backends.mysql", "NAME": database, "USER": "root",
          "PASSWORD": "", "OPTIONS": {"charset": "utf8mb4"}}
    if socket != "-":
        db["OPTIONS"]["unix_socket"] = socket
    else:
        db["HOST"], db["PORT"] = host, port
    settings.configure(
        DEBUG=False,
        SECRET_KEY="not-a-secret",
        DATABASES={"default": db},
        INSTALLED_APPS=["django.contrib.admin", "django.contrib.auth",
                        "django.contrib.contenttypes", "django.contrib.sessions",
                        "django.contrib.messages", "shop"],
        MIDDLEWARE=["django.contrib.sessions.middleware.SessionMiddleware",
                    "django.middleware.common.CommonMiddleware",
                    "django.contrib.auth.middleware.AuthenticationMiddleware",
                    "django.contrib.messages.middleware.MessageMiddleware"],
        TEMPLATES=[{"BACKEND": "django.template.backends.django.DjangoTemplates",
                    "APP_DIRS": True,
                    "OPTIONS": {"context_processors": [
                        "django.template.context_processors.request",
                        "django.contrib.auth.context_processors.auth",
                        "django.contrib.messages.context_processors.messages"]}}],
        ROOT_URLCONF="shop_urls",
        USE_TZ=True,
        TIME_ZONE="UTC",
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        ALLOWED_HOSTS=["testserver"],
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
    )
    import django

    django.setup()


def migrate():
    from django.core.management import call_command
    from django.db import connection

    out = io.StringIO()
    call_command("makemigrations", "shop", stdout=out, verbosity=1)
    call_command("migrate", stdout=out, verbosity=1, interactive=False)
    record("migrate.tables", sorted(connection.introspection.table_names()))
    applied = connection.cursor()
    applied.execute("SELECT app, name FROM django_migrations ORDER BY id")
    record("migrate.applied", [list(r) for r in applied.fetchall()])
    call_command("migrate", stdout=out, verbosity=1, interactive=False)  # nothing to do
    book = connection.introspection.get_constraints(connection.cursor(), "shop_book")
    record("introspection.book", sorted(
        [sorted(c["columns"]), c["primary_key"], c["unique"], bool(c["foreign_key"]),
         c["index"]] for c in book.values()))


def populate():
    from shop.models import Author, Book, Publisher, Review
    from django.contrib.auth.models import User

    pubs = Publisher.objects.bulk_create(
        [Publisher(name=n, country=c) for n, c in
         [("Acme", "US"), ("Boreal", "CA"), ("Cygnus", "GB"), ("Delta", "US")]])
    record("bulk_create.pks", [p.pk for p in pubs])
    authors = Author.objects.bulk_create(
        [Author(name=n, birth=None if i == 2 else datetime.date(1950 + i * 7, i + 1, 3 + i))
         for i, n in enumerate(["Ada", "Borges", "Calvino", "Duras", "Eco"])])
    record("bulk_create.authors", [a.pk for a in authors])
    genres = ["novel", "poetry", "essay"]
    for i in range(12):
        b = Book.objects.create(
            title=f"Book {i:02d}", publisher=pubs[i % 3], price=decimal.Decimal(5 + i * 3) / 2,
            pages=100 + i * 37 % 250, genre=genres[i % 3], in_print=i % 4 != 0,
            published=datetime.date(2000 + i % 5, 1 + i % 12, 1 + i))
        b.authors.set([authors[k] for k in range(5) if (i + k) % 4 == 0])
        for r in range(i % 3):
            Review.objects.create(book=b, rating=1 + (i + r) % 5, text=f"r{i}.{r}",
                                  meta={"stars": (i + r) % 5, "tags": ["a", "b"][: r + 1],
                                        "src": "web" if r else "app"})
    user = User.objects.create_superuser("admin", "admin@example.com", "pw")
    Review.objects.filter(pk__lte=3).update(reviewer=user)
    record("counts", [Publisher.objects.count(), Author.objects.count(), Book.objects.count(),
                      Review.objects.count(), Book.authors.through.objects.count()])
    b = Book.objects.get(title="Book 00")
    record("auto_now", [b.created is not None, b.updated >= b.created])


def queries():
    from django.db.models import (
        Avg,
        Case,
        Count,
        Exists,
        F,
        IntegerField,
        Max,
        Min,
        OuterRef,
        Q,
        Subquery,
        Sum,
        Value,
        When,
    )
    from django.db.models.functions import Coalesce, ExtractYear, Lower
    from shop.models import Author, Book, Publisher, Review

    def titles(qs):
        return list(qs.values_list("title", flat=True))

    record("filter", titles(Book.objects.filter(genre="novel", price__gt=5).order_by("title")))
    record("exclude", titles(Book.objects.exclude(in_print=False).order_by("-title")[:4]))
    record("q.or.not", titles(Book.objects.filter(
        Q(pages__gte=250) | ~Q(publisher__country="US")).order_by("pk")))
    record("f.compare", titles(Book.objects.filter(price__gt=F("pages") / 40).order_by("pk")))
    record("lookups", [
        titles(Book.objects.filter(title__icontains="BOOK 1").order_by("pk")),
        titles(Book.objects.filter(title__contains="ook 0").order_by("pk")[:3]),
        titles(Book.objects.filter(title__startswith="Book 1").order_by("pk")),
        titles(Book.objects.filter(published__year=2002).order_by("pk")),
        titles(Book.objects.filter(published__month__in=[1, 2]).order_by("pk")),
        titles(Book.objects.filter(pages__range=(150, 250)).order_by("pk")),
        list(Author.objects.filter(birth__isnull=True).values_list("name", flat=True)),
        titles(Book.objects.filter(publisher__name__iexact="acme").order_by("pk")),
        titles(Book.objects.filter(pk__in=[1, 5, 9, 100]).order_by("pk")),
    ])
    record("annotate", list(Publisher.objects.annotate(
        n=Count("books"), avg=Avg("books__price"), top=Max("books__pages"))
        .order_by("-n", "name").values_list("name", "n", "avg", "top")))
    record("annotate.distinct", list(Author.objects.annotate(
        nb=Count("books", distinct=True), nr=Count("books__reviews"))
        .filter(nb__gt=0).values_list("name", "nb", "nr")))
    record("aggregate", Book.objects.aggregate(
        total=Sum("price"), low=Min("price"), n=Count("id"), pages=Avg("pages")))
    record("aggregate.empty", Book.objects.filter(pages__lt=0).aggregate(
        total=Sum("price"), total0=Coalesce(Sum("pages"), 0)))
    record("values.group", list(Book.objects.values("genre").annotate(
        n=Count("id"), s=Sum("pages")).order_by("genre")))
    record("select_related", [
        [b.title, b.publisher.name] for b in
        Book.objects.select_related("publisher").filter(genre="essay").order_by("pk")])
    record("prefetch_related", [
        [b.title, [a.name for a in b.authors.all()], sorted(r.rating for r in b.reviews.all())]
        for b in Book.objects.prefetch_related("authors", "reviews").order_by("pk")])
    record("reverse.m2m", [[a.name, titles(a.books.order_by("pk"))]
                           for a in Author.objects.all()])
    record("slice", titles(Book.objects.order_by("-price", "pk")[2:5]))
    record("distinct.values", list(Book.objects.values_list("publisher__country", flat=True)
                                   .distinct().order_by("publisher__country")))
    record("dates", list(Book.objects.dates("published", "year")))
    newest = Review.objects.filter(book=OuterRef("pk")).order_by("-rating", "pk")
    record("subquery", list(Book.objects.annotate(
        best=Subquery(newest.values("rating")[:1]),
        has=Exists(Review.objects.filter(book=OuterRef("pk"), rating__gte=4)))
        .order_by("pk").values_list("title", "best", "has")))
    record("case.when", list(Book.objects.annotate(size=Case(
        When(pages__lt=150, then=Value(1)), When(pages__lt=250, then=Value(2)),
        default=Value(3), output_field=IntegerField())).values("size")
        .annotate(n=Count("id")).order_by("size")))
    record("functions", list(Author.objects.annotate(
        low=Lower("name"), y=ExtractYear("birth")).values_list("low", "y")))
    record("exists.first.last", [Book.objects.filter(pages__gt=1000).exists(),
                                 Book.objects.order_by("pk").first().title,
                                 Book.objects.order_by("pk").last().title])
    record("in_bulk", sorted(Publisher.objects.in_bulk([1, 2]).keys()))
    record("iterator", sum(1 for _ in Book.objects.iterator(chunk_size=5)))
    reviews = Review.objects.order_by("pk")
    record("json", [
        list(reviews.filter(meta__stars__gte=3).values_list("pk", flat=True)),
        reviews.filter(meta__has_key="tags").count(),
        list(reviews.values_list("meta__src", flat=True)),
        [sorted(r.meta.items()) for r in reviews[:2]],
    ])
    # JSON_UNQUOTE(JSON_EXTRACT(meta, '$."src"')) = JSON_EXTRACT('"web"', '$'): MariaDB
    # compares the JSON string unquoted (docs/SQL.md, *Functions*, JSON).
    record("json.key_exact", [
        list(reviews.filter(meta__src="web").values_list("text", flat=True)),
        list(reviews.filter(meta__tags__1="b").values_list("pk", flat=True)),
    ])


def changes():
    from django.db import IntegrityError, transaction
    from django.db.models import F
    from shop.models import Author, Book, Publisher, Review

    record("update", Book.objects.filter(genre="poetry").update(price=F("price") * 2,
                                                                 pages=F("pages") + 1))
    b = Book.objects.get(title="Book 03")
    before = b.updated
    b.in_print = False
    b.save()
    b.refresh_from_db()
    record("save.auto_now", [b.in_print, b.updated >= before])
    record("get_or_create", [
        [created, p.name, p.country] for p, created in
        [Publisher.objects.get_or_create(name="Acme", defaults={"country": "XX"}),
         Publisher.objects.get_or_create(name="Epsilon", defaults={"country": "FR"})]])
    record("update_or_create", [
        [created, a.name, a.birth] for a, created in
        [Author.objects.update_or_create(name="Eco", defaults={"birth": datetime.date(1932, 1, 5)})]])
    try:
        with transaction.atomic():
            Publisher.objects.create(name="Acme", country="US")
    except IntegrityError as e:
        record("integrity", e.args[0])
    with transaction.atomic():
        Publisher.objects.create(name="Zeta", country="DE")
        try:
            with transaction.atomic():
                Publisher.objects.create(name="Eta", country="DE")
                Book.objects.create(title="Book 00", publisher=Publisher.objects.get(name="Acme"),
                                    price=1, genre="novel", published=datetime.date(2020, 1, 1))
        except IntegrityError as e:
            record("savepoint.rollback", e.args[0])
    record("after.atomic", list(Publisher.objects.filter(country="DE").values_list("name",
                                                                                  flat=True)))
    record("delete.cascade", Publisher.objects.filter(name="Acme").delete())
    record("delete.m2m", Author.objects.filter(name="Ada").delete())
    record("after.delete", [Book.objects.count(), Review.objects.count(),
                            Book.authors.through.objects.count()])
    u = Review.objects.exclude(reviewer=None).count()
    from django.contrib.auth.models import User
    User.objects.all().delete()
    record("set_null", [u, Review.objects.exclude(reviewer=None).count(),
                        Review.objects.count()])
    Book.objects.create(title="Book Z", publisher=Publisher.objects.get(name="Boreal"),
                        price=3, genre="essay", published=datetime.date(2021, 5, 6))
    record("final", list(Book.objects.order_by("pk").values_list(
        "pk", "title", "publisher__name", "price", "pages", "in_print")))


def admin_changelist():
    from django.contrib import admin
    from django.contrib.auth.models import User
    from django.test import Client, RequestFactory
    from shop.models import Book

    user = User.objects.create_superuser("root2", "r@example.com", "pw")
    ma = admin.site._registry[Book]
    factory = RequestFactory()
    for query in [{}, {"genre__exact": "essay"}, {"q": "book 1"}, {"q": "book", "p": "2"},
                  {"in_print__exact": "1", "publisher__id__exact": "2", "o": "-4"},
                  {"q": "borges", "genre__exact": "novel"}]:
        request = factory.get("/admin/shop/book/", query)
        request.user = user
        cl = ma.get_changelist_instance(request)
        record(f"changelist.{sorted(query.items())}", [
            cl.result_count, cl.full_result_count, [str(b) for b in cl.result_list]])
    client = Client()
    client.force_login(user)
    statuses = []
    for url in ["/admin/", "/admin/shop/book/", "/admin/shop/book/?q=book&genre__exact=essay",
                "/admin/shop/book/2/change/", "/admin/auth/user/"]:
        response = client.get(url)
        statuses.append([url, response.status_code])
    record("admin.pages", statuses)
    response = client.get("/admin/shop/book/?genre__exact=essay")
    body = response.content.decode()
    record("admin.page.titles", sorted(b.title for b in Book.objects.filter(genre="essay")
                                       if f">{b.title}<" in body))


def main():
    workdir, host, port, socket, database = sys.argv[1:6]
    write_project(workdir)
    configure(host, port, socket, database)
    from django.db import connection

    record("server", [connection.vendor, connection.mysql_is_mariadb,
                      connection.features.can_return_rows_from_bulk_insert])
    migrate()
    populate()
    queries()
    changes()
    admin_changelist()
    for step in RESULTS:
        print(json.dumps(step))


if __name__ == "__main__":
    main()
