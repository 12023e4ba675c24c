"""What ``template function list`` says of each function class: Heat's API returns the first
line of each of its function classes' docstrings, and clients show it, so these sentences are
behaviour (Heat's own wording, quirks included: ``make_url`` is said to substitute on maps).

Keyed like the version table's paths (``module:Class`` under ``stoker.functions``): where two
versions bind a name to different classes, Heat's descriptions differ the same way.
"""

from __future__ import annotations

HEAT_DESCRIPTIONS: dict[str, str] = {
    "cfn:And": "A function that acts as an AND operator on conditions.",
    "cfn:Base64": "A placeholder function for converting to base64.",
    "cfn:FindInMap": "A function for resolving keys in the template mappings.",
    "cfn:GetAZs": "A function for retrieving the availability zones.",
    "cfn:GetAtt": "A function for resolving resource attributes.",
    "cfn:Join": "A function for joining strings.",
    "cfn:MemberListToMap": "A function to convert lists with enumerated keys and values to mapping.",
    "cfn:Not": "A function that acts as a NOT operator on a condition.",
    "cfn:Or": "A function that acts as an OR operator on conditions.",
    "cfn:ParamRef": "A function for resolving parameter references.",
    "cfn:Ref": "A function for resolving parameters or resource references.",
    "cfn:Replace": "A function for performing string substitutions.",
    "cfn:ResourceFacade": "A function for retrieving data in a parent provider template.",
    "cfn:Select": "A function for selecting an item from a list or map.",
    "cfn:Split": "A function for splitting strings.",
    "collections:Contains": "A function for checking whether specific value is in sequence.",
    "collections:Filter": "A function for filtering out values from lists.",
    "collections:ListConcat": "A function for extending lists.",
    "collections:ListConcatUnique": "A function for extending lists with unique items.",
    "collections:MapMerge": "A function for merging maps.",
    "collections:MapReplace": "A function for performing substitutions on maps.",
    "collections:Repeat": "A function for iterating over a list of items.",
    "collections:RepeatWithMap": "A function for iterating over a list of items or a dict of keys.",
    "collections:RepeatWithNestedLoop": "A function for iterating over a list of items or a dict of keys.",
    "logic:And": "A function that acts as an AND operator on conditions.",
    "logic:Equals": "A function for comparing whether two values are equal.",
    "logic:If": "A function to return corresponding value based on condition evaluation.",
    "logic:IfNullable": "A function to return corresponding value based on condition evaluation.",
    "logic:Not": "A function that acts as a NOT operator on a condition.",
    "logic:Or": "A function that acts as an OR operator on conditions.",
    "references:GetAtt": "A function for resolving resource attributes.",
    "references:GetAttAllAttributes": "A function for resolving resource attributes.",
    "references:GetAttThenSelect": "A function for resolving resource attributes.",
    "references:GetFile": "A function for including a file inline.",
    "references:GetParam": "A function for resolving parameter references.",
    "references:GetResource": "A function for resolving resource references.",
    "references:ResourceFacade": "A function for retrieving data in a parent provider template.",
    "strings:Digest": "A function for performing digest operations.",
    "strings:Join": "A function for joining strings.",
    "strings:JoinMultiple": "A function for joining one or more lists of strings.",
    "strings:MakeURL": "A function for performing substitutions on maps.",
    "strings:Replace": "A function for performing string substitutions.",
    "strings:ReplaceJson": "A function for performing string substitutions.",
    "strings:ReplaceJsonStrict": "A function for performing string substitutions.",
    "strings:ReplaceJsonVeryStrict": "A function for performing string substitutions.",
    "strings:StrSplit": "A function for splitting delimited strings into a list.",
    "yaql_function:Yaql": "A function for executing a yaql expression.",
}
