"""Registration, login, password and admin forms."""

from __future__ import annotations

from wtforms import BooleanField, EmailField, PasswordField, RadioField, SelectField, SelectMultipleField, StringField
from wtforms.validators import DataRequired, Email, EqualTo, Length, Optional, ValidationError
from wtforms.widgets import CheckboxInput, ListWidget

from accounts.rules import password_problem
from core.auth import Role
from core.federations import federation_choices
from core.forms import BaseForm, choices


class MultiCheckboxField(SelectMultipleField):
    widget = ListWidget(prefix_label=False)
    option_widget = CheckboxInput()


APPLICANT_TYPES = [("federation", "A FIDE member federation"), ("sponsor", "A sponsor")]


class RegistrationForm(BaseForm):
    organisation = StringField("Organisation", validators=[DataRequired("Enter the name of your federation or "
                                                                         "company."), Length(max=200)],
                               description="The federation or company that will bid.")
    applicant_type = RadioField("You bid as", choices=choices(APPLICANT_TYPES),
                                validators=[DataRequired("Choose federation or sponsor.")],
                                description="Any FIDE member federation or any sponsor may bid, as each call's "
                                            "regulations say.")
    federation = SelectField("FIDE federation", validators=[DataRequired("Choose a federation.")],
                             description="Your federation, or for a sponsor the federation of the host country.")
    name = StringField("Contact person", validators=[DataRequired("Enter a contact person."), Length(max=200)])
    email = EmailField("Email", validators=[DataRequired("Enter an email address."),
                                            Email("Enter a valid email address, like name@example.org."),
                                            Length(max=254)])
    password = PasswordField("Password", validators=[DataRequired("Choose a password.")],
                             description="At least 12 characters, not a common password.")
    confirm = PasswordField("Repeat the password",
                            validators=[DataRequired("Repeat the password."),
                                        EqualTo("password", "The two passwords are not the same.")])

    def __init__(self, *args, min_password_length: int = 12, **kwargs):
        super().__init__(*args, **kwargs)
        self.federation.choices = choices([("", "Choose…"), *federation_choices()])
        self.password.description = f"At least {min_password_length} characters, not a common password."
        self.min_password_length = min_password_length

    def validate_password(self, field):
        # Judged with the other fields, so a too-short password is said together with a mismatch, not after it.
        problem = password_problem(field.data or "", min_length=self.min_password_length, email=self.email.data or "")
        if problem:
            raise ValidationError(problem)


class LoginForm(BaseForm):
    email = EmailField("Email", validators=[DataRequired("Enter your email address."), Length(max=254)])
    password = PasswordField("Password", validators=[DataRequired("Enter your password.")])


class ChangePasswordForm(BaseForm):
    current_password = PasswordField("Current password", validators=[DataRequired("Enter your current password.")])
    new_password = PasswordField("New password", validators=[DataRequired("Choose a new password.")])
    confirm = PasswordField("Repeat the new password",
                            validators=[DataRequired("Repeat the new password."),
                                        EqualTo("new_password", "The two passwords are not the same.")])

    def __init__(self, *args, min_password_length: int = 12, email: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.min_password_length, self.email = min_password_length, email

    def validate_new_password(self, field):
        # Said together with a mismatch of the repeated password, not only once that is fixed.
        problem = password_problem(field.data or "", min_length=self.min_password_length, email=self.email)
        if problem:
            raise ValidationError(problem)


class ForgotPasswordForm(BaseForm):
    email = EmailField("Email", validators=[DataRequired("Enter your email address."),
                                            Email("Enter a valid email address, like name@example.org."),
                                            Length(max=254)],
                       description="The address of your account: we email it a link to set a new password.")


class ResetPasswordForm(ChangePasswordForm):
    """The new password twice, judged as a password change judges it; the emailed link stands for the current
    password."""
    current_password = None


class EmptyForm(BaseForm):
    """A form with only its CSRF token: for buttons that change state."""


ROLE_CHOICES = [(r.value, r.label) for r in Role]


class UserForm(BaseForm):
    email = EmailField("Email", validators=[DataRequired("Enter an email address."),
                                            Email("Enter a valid email address, like name@example.org."),
                                            Length(max=254)])
    name = StringField("Name", validators=[DataRequired("Enter a name."), Length(max=200)])
    organisation = StringField("Organisation", validators=[Optional(), Length(max=200)])
    federation = SelectField("FIDE federation", validators=[Optional()],
                             description="A WCOC or board member whose federation hosts a bid is recused from it.")
    roles = MultiCheckboxField("Roles", choices=choices(ROLE_CHOICES),
                               validators=[DataRequired("Give the account at least one role.")])
    is_president = BooleanField("FIDE President", description="A board member who may decide alone, in "
                                "consultation with the WCOC, when no board meeting can be held (as the call's "
                                "regulations provide).")
    password = PasswordField("Initial password", validators=[DataRequired("Choose an initial password.")],
                             description="At least 12 characters; the user can change it later.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.federation.choices = choices([("", "None"), *federation_choices()])


class UserEditForm(UserForm):
    password = None
    email = None
    name = None
    organisation = None


class SecondFactorForm(BaseForm):
    code = StringField("Code", validators=[DataRequired("Enter the code your authenticator app shows, or one of "
                                                        "your recovery codes."), Length(max=40)],
                       description="The 6 digits your authenticator app shows now, or one of your recovery codes.",
                       render_kw={"autocomplete": "one-time-code", "autocapitalize": "off", "spellcheck": "false"})


class TotpSetupForm(BaseForm):
    code = StringField("Code from the app", validators=[DataRequired("Enter the 6 digits your authenticator app "
                                                                     "shows."), Length(max=40)],
                       description="After you scan the QR code (or type the key), the app shows 6 digits.",
                       render_kw={"autocomplete": "one-time-code", "inputmode": "numeric"})


class RemoveTotpForm(BaseForm):
    password = PasswordField("Your password", validators=[DataRequired("Enter your password to remove the "
                                                                       "authenticator app.")])


class PasskeyNameForm(BaseForm):
    name = StringField("Name of the passkey", validators=[Length(max=80)],
                       description="So that you can tell your keys apart, such as “YubiKey” or “Laptop”.")
