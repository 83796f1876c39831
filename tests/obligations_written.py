"""Issue 23: the obligations of the regulations that the call's file lacked, each with its article and a phrase of
its text, as the bid page, the dossier and the contract's annex show them (the tests read them back from each)."""

# article -> (title, a phrase of its text)
WRITTEN = {
    "4": ("Score sheets", "Score sheets according to the FIDE specifications."),
    "8.2": ("Flags at the venue", "the FIDE flag, the IOC flag, the flags of the host nation and the participating "
                                  "countries"),
    "8.3": ("Everyone in the official hotel", "all participants with their teams, FIDE officials and accompanying "
                                              "persons are expected to stay in the official hotel"),
    "10.2": ("Programme of the opening ceremony", "supervised by FIDE; the FIDE Anthem, the anthem of the host "
                                                  "country and the anthems of the two players' countries are played"),
    "12.1": ("Commercial and media rights", "they can be transferred to the organizer only upon agreement"),
    "12.4.2": ("The official web domain", "statistics of traffic and full reports on web performance are provided "
                                          "to both FIDE and the organizer"),
    "12.4.3": ("Press centre and foreign journalists", "accreditation and hospitality of foreign journalists"),
    "7.4.3": ("The FIDE Supervisor's decisions", "implements the decisions of the FIDE Supervisor"),
}


def missing_from(text: str, *, escaped: bool = False) -> list[str]:
    """The articles of WRITTEN whose "Art. N, title" or phrase `text` lacks (`escaped`: as HTML writes an
    apostrophe). Whitespace is made single first, as a PDF's text wraps."""
    flat = " ".join(text.split())
    out = []
    for article, (title, phrase) in WRITTEN.items():
        if escaped:
            title, phrase = title.replace("'", "&#39;"), phrase.replace("'", "&#39;")
        if f"Art. {article}, {title}" not in flat or phrase not in flat:
            out.append(article)
    return out
