"""Issue 23: the contract page cites what each of its warnings applies."""

from tests.contracts.test_contracts_pages import as_user, get


def test_the_guarantee_warnings_cite_the_bidding_procedure_not_the_article(app, event, cf):
    """Art. 15.2(j) asks only for "any bank guarantees as described in the bidding procedure": how long the
    guarantee stays valid is the call's procedure (procedure.rules.guarantee_terms), so its warnings cite that."""
    admin_id, organizer_id = cf.admin(), cf.organizer()
    contract_id = cf.contract(event, owner_id=organizer_id, admin_id=admin_id)
    page = get(as_user(app, admin_id), f"/contracts/{contract_id}?as_of=2015-08-20")
    assert ("Bidding procedure: bank guarantee terms: the bank guarantee lapses in 12 days, on 1 September 2015, "
            "while") in page
    assert "Art. 15.2(j): the bank guarantee" not in page
