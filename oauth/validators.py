"""The OAuth2Validator subclass holding our authorization-server rules."""

from oauth2_provider.oauth2_validators import OAuth2Validator


class OperatorOAuth2Validator(OAuth2Validator):
    pass
